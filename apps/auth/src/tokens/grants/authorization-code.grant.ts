import { Injectable } from '@nestjs/common';

import { AuthorizationCodes } from '../../authorization-codes/authorization-codes';
import { AUTHORIZATION_CODE, ClientService, REFRESH_TOKEN } from '../../clients/client.service';
import { AccessTokenIssuer } from '../../keys/access-token.issuer';
import { RefreshTokenService } from '../../refresh/refresh-token.service';
import { Grant, Issued, issued, required, TokenRequest } from './grant';

/**
 * `grant_type=authorization_code` (contract §6, RFC 6749 §4.1.3 with RFC 7636 PKCE): a public client
 * names itself with `client_id`, a confidential one authenticates; both send the code, the redirect
 * URI it was issued for and the PKCE verifier. A refresh token (bound to the client) only for a
 * client registered for refresh_token.
 */
@Injectable()
export class AuthorizationCodeGrant implements Grant {
  readonly grantType = AUTHORIZATION_CODE;

  constructor(
    private readonly clients: ClientService,
    private readonly codes: AuthorizationCodes,
    private readonly refreshTokens: RefreshTokenService,
    private readonly accessTokens: AccessTokenIssuer,
  ) {}

  async issue(request: TokenRequest): Promise<Issued> {
    const clientId = required(request, 'clientId', 'client_id');
    const code = required(request, 'code', 'code');
    const redirectUri = required(request, 'redirectUri', 'redirect_uri');
    const codeVerifier = required(request, 'codeVerifier', 'code_verifier');
    const client = await this.clients.authenticateForGrant(clientId, request.clientSecret, AUTHORIZATION_CODE);
    const redemption = await this.codes.redeem(code, { clientId: client.id, redirectUri, codeVerifier });
    const grant = {
      userId: redemption.userId,
      orgId: redemption.orgId,
      clientId: client.id,
      scopes: redemption.scopes,
      roles: redemption.roles,
    };
    const access = await this.accessTokens.issue({
      subject: grant.userId,
      kind: 'user',
      ...grant,
      jti: redemption.accessTokenJti,
      sessionId: redemption.familyId,
    });
    // The session's origin is the token request's, as for the password grant (README Decisions); it
    // began at the sign-in the code stands for, as the password grant's at its password check.
    const origin = { ip: request.clientIp, deviceId: request.deviceId, userAgent: request.userAgent };
    const refreshToken = client.grantTypes.includes(REFRESH_TOKEN)
      ? await this.refreshTokens.issue(grant, redemption.familyId, origin, redemption.signedInAt)
      : '';
    await this.codes.confirm(redemption);
    return issued(access, refreshToken);
  }
}
