import { Inject, Injectable } from '@nestjs/common';

import { attributeFailure } from '../../audit/login-attribution';
import { GATEWAY_SUBJECT, GatewayCaller } from '../../callers/gateway-caller';
import { CLIENT_CREDENTIALS, ClientService } from '../../clients/client.service';
import { AUTH_CONFIG, AuthConfig } from '../../config';
import { AccessTokenIssuer } from '../../keys/access-token.issuer';
import { OAuthErrors } from '../../oauth/oauth-errors';
import { grantScopes } from '../../oauth/scope';
import { Grant, Issued, issued, TokenRequest } from './grant';

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
    // RFC 6749 §5.2: a request without client authentication is invalid_client, as a wrong secret is
    // (it was 400 invalid_request, a missing parameter: not what a client library reads as "check the
    // credentials"); a public client is told unauthorized_client below.
    const clientId = request.clientId ?? '';
    if (clientId === '') throw OAuthErrors.invalidClient();
    if (this.gateway.isGatewayClient(clientId)) {
      if (!this.gateway.isGatewaySecret(request.clientSecret ?? '')) throw OAuthErrors.invalidClient();
      return issued(await this.accessTokens.issue(GATEWAY_SUBJECT, this.config.SERVICE_TOKEN_TTL_SECONDS));
    }
    try {
      return await this.issueToClient(request, clientId);
    } catch (refusal) {
      // A refusal of a known client (wrong secret, grant or scope) is its org's: the login audit shows
      // it to the org's admins (README Decisions, "Login audit").
      const client = await this.clients.find(clientId).catch(() => undefined);
      if (client) attributeFailure(refusal, { subject: client.id, orgId: client.orgId });
      throw refusal;
    }
  }

  private async issueToClient(request: TokenRequest, clientId: string): Promise<Issued> {
    // A public client names itself by its id alone (RFC 6749 §2.3, `none`) and is never registered for
    // this grant (§4.4): contract §6's unauthorized_client, not a secret it cannot have "required".
    if (!request.clientSecret && (await this.clients.find(clientId))?.type === 'public') {
      throw OAuthErrors.unauthorizedClient(CLIENT_CREDENTIALS);
    }
    const client = request.clientSecret ? await this.clients.authenticate(clientId, request.clientSecret) : undefined;
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
