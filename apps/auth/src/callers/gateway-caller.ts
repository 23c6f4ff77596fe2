import { createHash, timingSafeEqual } from 'node:crypto';

import { AccessTokenVerifier, GATEWAY_CLIENT_ID, INTERNAL_GATEWAY_SCOPE, requireScope } from '@acct/access-token';
import { ACCESS_TOKEN_VERIFIER, bearerTokenOf } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Metadata } from '@grpc/grpc-js';
import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';

/** The gateway's identity in its own token: a client of no org, allowed `internal:gateway` only. */
export const GATEWAY_SUBJECT = {
  subject: 'service:gateway',
  kind: 'client',
  orgId: '00000000-0000-0000-0000-000000000000',
  clientId: GATEWAY_CLIENT_ID,
  scopes: [INTERNAL_GATEWAY_SCOPE],
  roles: [],
} as const;

/** What a call says about the end user behind it: believed from the gateway only. */
export interface ClientAttributes {
  clientIp: string;
  deviceId: string;
  userAgent: string;
  deviceToken?: string;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * The gateway as a caller of auth. Token issuance and the login page's sign-in are public (the grant
 * carries the credentials), but the end user's IP, device and user agent key the lockout, the
 * account-wide ceiling's exemptions and the login audit, so auth believes them only from a call
 * carrying the gateway's own access token (scope `internal:gateway`, verified like any caller's).
 * The gateway gets that token with client_credentials as the built-in client `gateway`, whose secret
 * is GATEWAY_CLIENT_SECRET (shared by the two, never stored in the clients table).
 */
@Injectable()
export class GatewayCaller {
  private readonly secretDigest: Buffer;

  constructor(
    @Inject(ACCESS_TOKEN_VERIFIER) private readonly verifier: AccessTokenVerifier,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.secretDigest = digest(config.GATEWAY_CLIENT_SECRET);
  }

  /** Whether `clientId` names the gateway's built-in client (its secret is checked by `isGatewaySecret`). */
  isGatewayClient(clientId: string): boolean {
    return clientId === GATEWAY_CLIENT_ID;
  }

  /** A constant-time comparison with GATEWAY_CLIENT_SECRET (of digests, so lengths leak nothing). */
  isGatewaySecret(secret: string): boolean {
    return timingSafeEqual(digest(secret), this.secretDigest);
  }

  /**
   * Refuses a call that names client attributes without the gateway's token: `forbidden` (gRPC
   * PERMISSION_DENIED) with no token, `unauthenticated` for an invalid one, `insufficient_scope` for
   * anyone else's. A call naming none (another service, a test) goes on as an unknown client.
   */
  async assertMayName(metadata: Metadata | undefined, attributes: ClientAttributes): Promise<void> {
    const named = [attributes.clientIp, attributes.deviceId, attributes.userAgent, attributes.deviceToken ?? ''];
    if (named.every((value) => value.length === 0)) return;
    const token = bearerTokenOf(metadata);
    if (!token) {
      throw new DomainError(
        'forbidden',
        'Only the gateway may name the client (client_ip, device_id, user_agent, device_token).',
      );
    }
    requireScope(await this.verifier.verify(token), INTERNAL_GATEWAY_SCOPE);
  }
}
