import { Inject, Injectable } from '@nestjs/common';

import { attributeFailure } from '../../audit/login-attribution';
import { ClientService, REFRESH_TOKEN } from '../../clients/client.service';
import { AUTH_CONFIG, AuthConfig } from '../../config';
import { AccessTokenIssuer } from '../../keys/access-token.issuer';
import { RefreshTokenService } from '../../refresh/refresh-token.service';
import { Grant, Issued, issued, required, TokenRequest } from './grant';

/**
 * `grant_type=refresh_token` (contract §4): a new access token and a new refresh token of the same
 * family. A refresh token is bound to the client it was issued to (contract §6): a registered client
 * names itself (`client_id`, and its secret when confidential) and must still be registered for
 * refresh_token; without `client_id` only tokens of the built-in public client are refreshed.
 */
@Injectable()
export class RefreshTokenGrant implements Grant {
  readonly grantType = REFRESH_TOKEN;

  constructor(
    private readonly refreshTokens: RefreshTokenService,
    private readonly accessTokens: AccessTokenIssuer,
    private readonly clients: ClientService,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async issue(request: TokenRequest): Promise<Issued> {
    try {
      return await this.refreshed(request);
    } catch (refusal) {
      // A refusal of a known token (reused, revoked, expired, another client's) is its user's: the
      // login audit shows it to the user's org (README Decisions, "Login audit").
      const token = request.refreshToken
        ? await this.refreshTokens.find(request.refreshToken).catch(() => undefined)
        : undefined;
      if (token) attributeFailure(refusal, { subject: token.userId, orgId: token.orgId });
      throw refusal;
    }
  }

  private async refreshed(request: TokenRequest): Promise<Issued> {
    const refreshToken = required(request, 'refreshToken', 'refresh_token');
    const clientId = request.clientId || this.config.DEFAULT_PUBLIC_CLIENT_ID;
    if (clientId !== this.config.DEFAULT_PUBLIC_CLIENT_ID) {
      await this.clients.authenticateForGrant(clientId, request.clientSecret, REFRESH_TOKEN);
    }
    const {
      refreshToken: next,
      familyId,
      grant,
      scopes,
    } = await this.refreshTokens.rotate({
      refreshToken,
      scope: request.scope,
      clientId,
    });
    const access = await this.accessTokens.issue({
      subject: grant.userId,
      kind: 'user',
      orgId: grant.orgId,
      clientId: grant.clientId,
      scopes,
      roles: grant.roles,
      sessionId: familyId,
    });
    return issued(access, next);
  }
}
