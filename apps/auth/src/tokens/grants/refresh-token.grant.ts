import { Injectable } from '@nestjs/common';

import { RefreshTokenService } from '../../refresh/refresh-token.service';
import { AccessTokenIssuer } from '../access-token.issuer';
import { Grant, required, TokenRequest, TokenSet, tokenSet } from './grant';

/** `grant_type=refresh_token` (contract §4): a new access token and a new refresh token of the same family. */
@Injectable()
export class RefreshTokenGrant implements Grant {
  readonly grantType = 'refresh_token';

  constructor(
    private readonly refreshTokens: RefreshTokenService,
    private readonly accessTokens: AccessTokenIssuer,
  ) {}

  async issue(request: TokenRequest): Promise<TokenSet> {
    const { refreshToken, grant, scopes } = await this.refreshTokens.rotate({
      refreshToken: required(request, 'refreshToken', 'refresh_token'),
      scope: request.scope,
      clientId: request.clientId || undefined,
    });
    const access = await this.accessTokens.issue({
      subject: grant.userId,
      kind: 'user',
      orgId: grant.orgId,
      clientId: grant.clientId,
      scopes,
      roles: grant.roles,
    });
    return tokenSet(access, refreshToken);
  }
}
