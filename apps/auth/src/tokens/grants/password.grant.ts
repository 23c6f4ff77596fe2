import { scopesOfRoles } from '@acct/access-token';
import { Inject, Injectable } from '@nestjs/common';

import { ClientService } from '../../clients/client.service';
import { AUTH_CONFIG, AuthConfig } from '../../config';
import { OAuthErrors } from '../../oauth/oauth-errors';
import { grantScopes } from '../../oauth/scope';
import { RefreshTokenService } from '../../refresh/refresh-token.service';
import { AccessTokenIssuer } from '../access-token.issuer';
import { IdentityClient } from '../identity.client';
import { LOGIN_POLICIES, LoginAttempt, LoginPolicy } from '../login-policy';
import { Grant, required, TokenRequest, TokenSet, tokenSet } from './grant';

export const PASSWORD = 'password';

/**
 * `grant_type=password` (contract §4): e-mail (case-insensitive) and password, checked by identity.
 * Issues an access token and the first refresh token of a new family.
 */
@Injectable()
export class PasswordGrant implements Grant {
  readonly grantType = PASSWORD;

  constructor(
    private readonly identity: IdentityClient,
    private readonly clients: ClientService,
    private readonly refreshTokens: RefreshTokenService,
    private readonly accessTokens: AccessTokenIssuer,
    @Inject(LOGIN_POLICIES) private readonly policies: LoginPolicy[],
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async issue(request: TokenRequest): Promise<TokenSet> {
    const username = required(request, 'username', 'username').trim().toLowerCase();
    const password = required(request, 'password', 'password');
    const clientId = await this.client(request);
    const attempt: LoginAttempt = {
      username,
      clientIp: request.clientIp,
      deviceId: request.deviceId,
      userAgent: request.userAgent,
      mfaCode: request.mfaCode,
    };

    for (const policy of this.policies) await policy.beforePasswordCheck(attempt);
    const user = await this.identity.verifyPassword(username, password);
    if (!user) {
      for (const policy of this.policies) await policy.afterFailure(attempt);
      throw OAuthErrors.badCredentials();
    }
    // Only after a correct password, so the answer reveals nothing to someone without it.
    if (user.status !== 'active') throw OAuthErrors.accountNotActive();
    for (const policy of this.policies) await policy.afterSuccess(attempt, user);

    const scopes = grantScopes(request.scope, scopesOfRoles(user.roles));
    const grant = { userId: user.id, orgId: user.orgId, clientId, scopes, roles: user.roles };
    const access = await this.accessTokens.issue({ subject: user.id, kind: 'user', ...grant });
    return tokenSet(access, await this.refreshTokens.issue(grant));
  }

  /**
   * The client the tokens are issued to: the built-in public client (DEFAULT_PUBLIC_CLIENT_ID, no
   * secret: RFC 6749 §2.1) unless another is named, which must then authenticate and be allowed
   * this grant.
   */
  private async client(request: TokenRequest): Promise<string> {
    const clientId = request.clientId || this.config.DEFAULT_PUBLIC_CLIENT_ID;
    if (clientId === this.config.DEFAULT_PUBLIC_CLIENT_ID) return clientId;
    const client = await this.clients.authenticate(clientId, request.clientSecret);
    if (!client) throw OAuthErrors.invalidClient();
    if (!client.grantTypes.includes(PASSWORD)) throw OAuthErrors.unauthorizedClient(PASSWORD);
    return client.id;
  }
}
