import { AccessTokenVerifier, requireScope } from '@acct/access-token';
import { ACCESS_TOKEN_VERIFIER, bearerTokenOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Inject, Injectable } from '@nestjs/common';

import { ClientService } from '../clients/client.service';
import { AUTH_CONFIG, AuthConfig } from '../config';
import { OAuthErrors } from '../oauth/oauth-errors';

/** Scope of internal callers of the revocation and introspection methods (a client made for them). */
export const INTERNAL_REVOCATION_SCOPE = 'internal:revocation';

/** Who asks to revoke or introspect a token. */
export type Requester =
  | { kind: 'internal' }
  /** `orgId` is undefined for the built-in public client, which serves every org. */
  | { kind: 'client'; clientId: string; orgId: string | undefined; confidential: boolean };

export interface ClientAuthentication {
  clientId: string;
  clientSecret: string;
}

/**
 * RFC 7009 §2.1 / RFC 7662 §2.1: the client of the request authenticates as its type requires (a
 * confidential client by its secret, a public one by its id alone); without a client_id, the call
 * must carry an internal caller's own access token with internal:revocation.
 */
@Injectable()
export class RequesterAuthentication {
  constructor(
    private readonly clients: ClientService,
    @Inject(ACCESS_TOKEN_VERIFIER) private readonly verifier: AccessTokenVerifier,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async authenticate(
    request: ClientAuthentication,
    metadata: Metadata | undefined,
    options: { confidentialOnly: boolean },
  ): Promise<Requester> {
    if (request.clientId.length === 0) return this.internal(metadata);
    const { clientId, clientSecret } = request;
    if (clientId === this.config.DEFAULT_PUBLIC_CLIENT_ID && !options.confidentialOnly && clientSecret === '') {
      return { kind: 'client', clientId, orgId: undefined, confidential: false };
    }
    const client = await this.clients.find(clientId);
    if (!client) throw OAuthErrors.invalidClient();
    if (client.type === 'public') {
      // A public client has no secret to send, and may not introspect (contract §6).
      if (clientSecret !== '' || options.confidentialOnly) throw OAuthErrors.invalidClient();
      return { kind: 'client', clientId, orgId: client.orgId, confidential: false };
    }
    if (!(await this.clients.authenticate(clientId, clientSecret))) throw OAuthErrors.invalidClient();
    return { kind: 'client', clientId, orgId: client.orgId, confidential: true };
  }

  private async internal(metadata: Metadata | undefined): Promise<Requester> {
    const token = bearerTokenOf(metadata);
    if (!token) throw OAuthErrors.invalidClient();
    requireScope(await this.verifier.verify(token), INTERNAL_REVOCATION_SCOPE);
    return { kind: 'internal' };
  }
}

/** Whether the requester may act on a token issued to `clientId` (RFC 7009 §2.1: its own only). */
export const mayActOn = (requester: Requester, clientId: string) =>
  requester.kind === 'internal' || requester.clientId === clientId;
