import { AccessTokenVerifier, Caller, requireScope } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { ACCESS_TOKEN_VERIFIER } from '@acct/grpc';
import { DomainError, validationFailed } from '@acct/problem';
import { Revocations } from '@acct/revocation';
import { Inject, Injectable } from '@nestjs/common';

import { ADMIN_ACTIONS, AdminAudit } from '../audit/admin-audit';
import { IdentityClient, requireStillAdmin } from '../identity/identity.client';
import { OAuthErrors } from '../oauth/oauth-errors';
import { RefreshTokenService } from '../refresh/refresh-token.service';
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
    private readonly identity: IdentityClient,
    private readonly audit: AdminAudit,
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
   * those of a user of its own org, when identity still holds it for one (`callerToken`, its own token:
   * as every other admin action of auth, since a disabled, deleted or demoted admin's token works until
   * its revocation arrives, up to a second later and while NATS is down until it is back), and the
   * admin's action is recorded in the admin audit, as RevokeUserSessions records it (contract §7: every
   * change is audited). Answers how many refresh families were live.
   */
  async revokeUser(caller: Caller, callerToken: string, userId: string, orgId: string): Promise<number> {
    if (caller.scopes.has(INTERNAL_REVOCATION_SCOPE)) {
      if (!UUID.test(orgId)) throw validationFailed([{ field: 'org_id', message: 'must be a UUID' }]);
      if (!UUID.test(userId)) throw validationFailed([{ field: 'user_id', message: 'must be a UUID' }]);
      return this.refreshTokens.revokeUser(orgId, userId, this.clock.now());
    }
    requireScope(caller, 'users:write');
    await requireStillAdmin(this.identity, caller, callerToken, 'Only admins may end the sessions of a user.');
    if (orgId !== '' && orgId.toLowerCase() !== caller.orgId)
      throw new DomainError('forbidden', 'That user is not of your org.');
    if (!UUID.test(userId)) throw validationFailed([{ field: 'user_id', message: 'must be a UUID' }]);
    const user = userId.toLowerCase();
    const revoked = await this.refreshTokens.revokeUser(caller.orgId, user, this.clock.now());
    await this.audit.record({
      orgId: caller.orgId,
      actorId: caller.subject,
      action: ADMIN_ACTIONS.sessionsRevoked,
      targetType: 'user',
      targetId: user,
      details: { revoked_sessions: String(revoked) },
    });
    return revoked;
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
