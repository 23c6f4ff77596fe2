import { randomUUID } from 'node:crypto';

import { scopesOfRoles } from '@acct/access-token';
import { Revocations } from '@acct/revocation';
import { Inject, Injectable } from '@nestjs/common';

import { ClientService, PASSWORD } from '../../clients/client.service';
import { AUTH_CONFIG, AuthConfig } from '../../config';
import { VerifiedUser } from '../../identity/identity.client';
import { AccessTokenIssuer } from '../../keys/access-token.issuer';
import { attemptOf, PasswordLogin } from '../../login/password-login';
import { OAuthErrors } from '../../oauth/oauth-errors';
import { grantScopes } from '../../oauth/scope';
import { RefreshTokenService } from '../../refresh/refresh-token.service';
import { Grant, Issued, issued, required, TokenRequest } from './grant';

export { PASSWORD };

/**
 * `grant_type=password` (contract §4): e-mail (case-insensitive) and password, checked by the login
 * steps (lockout, ceiling, identity, MFA: login/password-login.ts). Issues an access token and the
 * first refresh token of a new family.
 */
@Injectable()
export class PasswordGrant implements Grant {
  readonly grantType = PASSWORD;

  constructor(
    private readonly login: PasswordLogin,
    private readonly clients: ClientService,
    private readonly refreshTokens: RefreshTokenService,
    private readonly accessTokens: AccessTokenIssuer,
    private readonly revocations: Revocations,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async issue(request: TokenRequest): Promise<Issued> {
    const username = required(request, 'username', 'username').trim().toLowerCase();
    const password = required(request, 'password', 'password');
    const client = await this.client(request);
    const scopesFor = (user: VerifiedUser): string[] => {
      const userScopes = scopesOfRoles(user.roles);
      const allowed = client.scopes ? userScopes.filter((scope) => client.scopes?.includes(scope)) : userScopes;
      const granted = grantScopes(request.scope, allowed);
      // RFC 6749 §3.3: without a scope the default applies, or the request fails with invalid_scope. A
      // default with nothing in it (the client's scopes and the account's share none) grants nothing, and
      // the login page refuses it too; issued, it was an access token every route refuses and a session.
      if (granted.length === 0) {
        throw OAuthErrors.invalidScope('The account holds none of the scopes this client may be granted.');
      }
      return granted;
    };
    // The scope is judged before an MFA code is spent too: a login refused for it keeps its code.
    const { user, deviceToken, checkedAt } = await this.login.verify(
      attemptOf(request, username),
      { password },
      scopesFor,
    );
    const scopes = scopesFor(user);
    const grant = { userId: user.id, orgId: user.orgId, clientId: client.id, scopes, roles: user.roles };
    // The family first, so a revocation of the user's sessions that sees no family saw no token of it;
    // begun when the password was checked, so a revocation from a later time ends it, however late it
    // was stored.
    const sessionId = randomUUID();
    const origin = { ip: request.clientIp, deviceId: request.deviceId, userAgent: request.userAgent };
    const refreshToken = await this.refreshTokens.issue(grant, sessionId, origin, checkedAt);
    const access = await this.accessTokens.issue({ subject: user.id, kind: 'user', ...grant, sessionId });
    // The user's sessions were ended after its password was checked (disabled, deleted, its password
    // set while this login ran): that revocation looked for families before this one existed and
    // covers no token issued after it, so the login is refused here, as it would be a moment later.
    if (this.revocations.set.subjectRevokedAfter(user.orgId, user.id, checkedAt)) {
      await this.refreshTokens.revokeFamily(sessionId);
      throw OAuthErrors.badCredentials();
    }
    return issued(access, refreshToken, deviceToken);
  }

  /**
   * The client the tokens are issued to: the built-in public client (DEFAULT_PUBLIC_CLIENT_ID, no
   * secret: RFC 6749 §2.1) unless another is named, which must then authenticate as its type requires
   * and be registered for this grant; its registered scopes bound what the tokens may carry.
   */
  private async client(request: TokenRequest): Promise<{ id: string; scopes?: readonly string[] }> {
    const clientId = request.clientId || this.config.DEFAULT_PUBLIC_CLIENT_ID;
    if (clientId === this.config.DEFAULT_PUBLIC_CLIENT_ID) return { id: clientId };
    return this.clients.authenticateForGrant(clientId, request.clientSecret, PASSWORD);
  }
}
