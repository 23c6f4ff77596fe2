import { Caller, namesCaller, requireScope, requireUser, USERS_READ_SCOPE } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { ADMIN_ACTIONS, AdminAudit } from '../audit/admin-audit';
import { IdentityClient, requireStillAdmin } from '../identity/identity.client';
import { StoredSession } from '../refresh/refresh-token.repository';
import { RefreshTokenService } from '../refresh/refresh-token.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const notFound = (what = 'user') => new DomainError('not_found', `No such ${what}.`);

/**
 * A user's sessions (contract §7): its live refresh families, listed and revoked. The user itself
 * (`me`) may do this; anyone else must be an admin of the user's org (a user, or a client with the
 * admin role) with users:read (list) or users:write (revoke). Whether another user is of the
 * caller's org is identity's to say, asked with the caller's own token: another org's user and an
 * unknown one are both 404. Revoking goes through RefreshTokenService, which also revokes the
 * access tokens issued from the family (the one revocation mechanism, within 1 s). Every revocation
 * is written to the admin-action audit.
 */
@Injectable()
export class SessionsService {
  constructor(
    private readonly refreshTokens: RefreshTokenService,
    private readonly identity: IdentityClient,
    private readonly audit: AdminAudit,
    private readonly clock: Clock,
  ) {}

  async list(caller: Caller, callerToken: string, userId: string): Promise<StoredSession[]> {
    const user = await this.target(caller, callerToken, userId, 'users:read');
    return this.refreshTokens.sessionsOf(caller.orgId, user);
  }

  async revoke(caller: Caller, callerToken: string, userId: string, named: string): Promise<void> {
    const user = await this.target(caller, callerToken, userId, 'users:write');
    if (!UUID.test(named)) throw notFound('session');
    // A UUID in any letter case; families are kept under the lower-case id.
    const sessionId = named.toLowerCase();
    const sessions = await this.refreshTokens.sessionsOf(caller.orgId, user);
    if (!sessions.some((session) => session.id === sessionId)) throw notFound('session');
    // Ended since it was listed (a second request for the same session, its token revoked or reused):
    // as a moment later, it is no longer there, and its end was audited by whoever ended it.
    if ((await this.refreshTokens.endSession(sessionId)) === 0) throw notFound('session');
    await this.audit.record({
      orgId: caller.orgId,
      actorId: caller.subject,
      action: ADMIN_ACTIONS.sessionRevoked,
      targetType: 'session',
      targetId: sessionId,
      details: { user_id: user },
    });
  }

  /** Every session of the user, and every access token issued to it before now. */
  async revokeAll(caller: Caller, callerToken: string, userId: string): Promise<number> {
    return this.endAll(caller, await this.target(caller, callerToken, userId, 'users:write'));
  }

  /**
   * As revokeAll, for an admin only (RevokeUserTokens): the user it names, even itself, is another
   * user of its org that it administers.
   */
  async revokeAllAsAdmin(caller: Caller, callerToken: string, userId: string): Promise<number> {
    return this.endAll(caller, await this.administered(caller, callerToken, userId, 'users:write'));
  }

  private async endAll(caller: Caller, user: string): Promise<number> {
    // Up to and including this millisecond: a session begun as the request arrives ends too.
    const revoked = await this.refreshTokens.revokeUser(caller.orgId, user, this.clock.now() + 1);
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

  /**
   * The user id the caller may act on, or the refusal. An admin client of the org (acting with its
   * own roles, as it does for every other admin action of contract §7) administers users' sessions
   * too; only `me` needs a user, since a client has no sessions of its own.
   */
  private async target(caller: Caller, callerToken: string, userId: string, scope: string): Promise<string> {
    if (userId === 'me') requireUser(caller, 'Only users have sessions: name the user by its id.');
    // The user itself needs the scope of the routes too (users:read, as every self-service use case):
    // a token narrowed to other scopes (system:read) neither lists nor ends its user's sessions.
    if (namesCaller(caller, userId)) {
      requireScope(caller, USERS_READ_SCOPE);
      return caller.subject;
    }
    return this.administered(caller, callerToken, userId, scope);
  }

  /**
   * Another user of the caller's org, which the caller administers: it has the scope and is still an
   * admin, and identity shows it the user (another org's and an unknown one alike are 404).
   */
  private async administered(caller: Caller, callerToken: string, userId: string, scope: string): Promise<string> {
    // Identity reads a UUID in any letter case; sessions and revocations are kept under the lower-case id.
    const id = userId.toLowerCase();
    requireScope(caller, scope);
    await requireStillAdmin(this.identity, caller, callerToken, "Only admins may see or end another user's sessions.");
    if (!UUID.test(id) || !(await this.identity.visibleTo(callerToken, id))) throw notFound();
    return id;
  }
}
