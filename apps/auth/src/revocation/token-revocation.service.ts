import { AccessTokenVerifier, Caller, requireScope } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { ACCESS_TOKEN_VERIFIER } from '@acct/grpc';
import { DomainError, validationFailed } from '@acct/problem';
import { Revocations } from '@acct/revocation';
import { Inject, Injectable } from '@nestjs/common';

import { OAuthErrors } from '../oauth/oauth-errors';
import { RefreshTokenService } from '../refresh/refresh-token.service';
import { SessionsService } from '../sessions/sessions.service';
import { INTERNAL_REVOCATION_SCOPE, mayActOn, Requester } from './requester';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * RFC 7009 revocation and "end every session of a user". A refresh token takes its family and the
 * access tokens issued from it; an access token goes by its `jti`; whatever is unknown, malformed,
 * expired, already revoked or another client's is left alone, and the answer is the same. What is
 * revoked reaches every process within 1 s (Revocations); when it cannot be stored the call fails
 * with 503 instead of claiming a success.
 */
@Injectable()
export class TokenRevocationService {
  constructor(
    private readonly refreshTokens: RefreshTokenService,
    private readonly revocations: Revocations,
    private readonly clock: Clock,
    @Inject(ACCESS_TOKEN_VERIFIER) private readonly verifier: AccessTokenVerifier,
    private readonly sessions: SessionsService,
  ) {}

  async revoke(token: string, tokenTypeHint: string, requester: Requester): Promise<void> {
    if (token.length === 0) throw OAuthErrors.invalidRequest('The token parameter is required.');
    // The hint only decides which kind is tried first (RFC 7009 §2.1).
    const access = () => this.revokeAccessToken(token, requester);
    const refresh = () => this.revokeRefreshToken(token, requester);
    const kinds = tokenTypeHint === 'access_token' ? [access, refresh] : [refresh, access];
    for (const revokeKind of kinds) if (await revokeKind()) return;
  }

  /**
   * Ends every session of a user: an internal caller names the org; an admin (users:write) may end
   * those of a user of its own org, as RevokeUserSessions does (SessionsService: identity still holds
   * the caller for an admin and shows it the user, and the action is recorded in the admin audit).
   * Answers how many refresh families were live.
   */
  async revokeUser(caller: Caller, callerToken: string, userId: string, orgId: string): Promise<number> {
    if (caller.scopes.has(INTERNAL_REVOCATION_SCOPE)) {
      if (!UUID.test(orgId)) throw validationFailed([{ field: 'org_id', message: 'must be a UUID' }]);
      if (!UUID.test(userId)) throw validationFailed([{ field: 'user_id', message: 'must be a UUID' }]);
      // Up to and including this millisecond, as for an admin: a session begun as the request arrives ends too.
      return this.refreshTokens.revokeUser(orgId, userId, this.clock.now() + 1);
    }
    requireScope(caller, 'users:write');
    if (orgId !== '' && orgId.toLowerCase() !== caller.orgId)
      throw new DomainError('forbidden', 'That user is not of your org.');
    if (!UUID.test(userId)) throw validationFailed([{ field: 'user_id', message: 'must be a UUID' }]);
    return this.sessions.revokeAllAsAdmin(caller, callerToken, userId);
  }

  private async revokeRefreshToken(token: string, requester: Requester): Promise<boolean> {
    const stored = await this.refreshTokens.find(token);
    if (!stored) return false;
    if (mayActOn(requester, stored.clientId)) await this.refreshTokens.revokeFamily(stored.familyId);
    return true;
  }

  private async revokeAccessToken(token: string, requester: Requester): Promise<boolean> {
    let caller: Caller;
    try {
      // A revoked token is revoked again: this process may know the revocation (its own earlier
      // attempt, which answered 503, or another's notice) while Redis does not have it yet, and only a
      // store says so; answering OK from memory told the retry it was done while a process started
      // later still accepted the token.
      caller = await this.verifier.verify(token, { revoked: true });
    } catch (error) {
      // Not a valid token (malformed, expired): nothing to do.
      if (error instanceof DomainError && error.code === 'service_unavailable') throw error;
      return false;
    }
    if (mayActOn(requester, caller.clientId)) await this.revocations.revokeToken(caller.tokenId, caller.expiresAt);
    return true;
  }
}
