import { AccessTokenIssuer } from '../keys/access-token.issuer';
import { INTERNAL_REVOCATION_SCOPE } from '../revocation/requester';
import { AuthHarness } from './auth-harness';

/**
 * An internal caller's own access token (internal:revocation) of `orgId`. Auth mints it itself: no
 * client can be registered with an internal scope.
 */
export async function internalRevocationToken(harness: AuthHarness, orgId: string): Promise<string> {
  const { token } = await harness.get(AccessTokenIssuer).issue({
    subject: 'ops-service',
    kind: 'client',
    orgId,
    clientId: 'ops-service',
    scopes: [INTERNAL_REVOCATION_SCOPE],
    roles: [],
  });
  return token;
}
