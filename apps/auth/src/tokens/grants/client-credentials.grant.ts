import { Inject, Injectable } from '@nestjs/common';

import { GATEWAY_SUBJECT, GatewayCaller } from '../../callers/gateway-caller';
import { CLIENT_CREDENTIALS, ClientService } from '../../clients/client.service';
import { AUTH_CONFIG, AuthConfig } from '../../config';
import { AccessTokenIssuer } from '../../keys/access-token.issuer';
import { OAuthErrors } from '../../oauth/oauth-errors';
import { grantScopes } from '../../oauth/scope';
import { Grant, Issued, issued, required, TokenRequest } from './grant';

/**
 * `grant_type=client_credentials` (contract §4): a confidential client acting for itself in its org,
 * with its own roles. No refresh token (RFC 6749 §4.4.3): it can always authenticate again.
 * The built-in client `gateway` (secret GATEWAY_CLIENT_SECRET) gets the gateway's own short-lived
 * token, scope `internal:gateway` (callers/gateway-caller.ts).
 */
@Injectable()
export class ClientCredentialsGrant implements Grant {
  readonly grantType = CLIENT_CREDENTIALS;

  constructor(
    private readonly clients: ClientService,
    private readonly accessTokens: AccessTokenIssuer,
    private readonly gateway: GatewayCaller,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async issue(request: TokenRequest): Promise<Issued> {
    const clientId = required(request, 'clientId', 'client_id');
    const clientSecret = required(request, 'clientSecret', 'client_secret');
    if (this.gateway.isGatewayClient(clientId)) {
      if (!this.gateway.isGatewaySecret(clientSecret)) throw OAuthErrors.invalidClient();
      return issued(await this.accessTokens.issue(GATEWAY_SUBJECT, this.config.SERVICE_TOKEN_TTL_SECONDS));
    }
    const client = await this.clients.authenticate(clientId, clientSecret);
    if (!client) throw OAuthErrors.invalidClient();
    if (!client.grantTypes.includes(CLIENT_CREDENTIALS)) throw OAuthErrors.unauthorizedClient(CLIENT_CREDENTIALS);

    const access = await this.accessTokens.issue({
      subject: client.id,
      kind: 'client',
      orgId: client.orgId,
      clientId: client.id,
      scopes: grantScopes(request.scope, client.scopes),
      roles: client.roles,
    });
    return issued(access);
  }
}
