import { Caller } from '@acct/access-token';
import { requireScope } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { identityV1 } from '@acct/contracts';
import { PASSWORD_RESET_ISSUED, PASSWORD_RESET_REQUESTED, USER_ACTIVATED, USER_PASSWORD_CHANGED } from '@acct/events';
import { DomainError, validationFailed } from '@acct/problem';
import { passwordProblem } from '@acct/user-fields';
import { Injectable } from '@nestjs/common';

import { CredentialsRepository } from '../credentials/credentials.repository';
import { OutboxRelay } from '../outbox/outbox.relay';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PasswordSetTokensRepository } from '../password-set-tokens/password-set-tokens.repository';
import { passwordChanged } from '../passwords/password-changed';
import { PasswordHasher } from '../passwords/password-hasher';
import { Transactions } from '../prisma/transactions';
import { CallerRoles } from '../users/caller-roles';
import { toUserMessage } from '../users/user';
import { UsersRepository } from '../users/users.repository';

const invalidToken = () =>
  new DomainError('unauthenticated', 'The link is invalid, expired or already used.', {
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  });

const noSuchUser = () => new DomainError('not_found', 'No such user.');

/**
 * Contract §3: activation and password reset. A password:set token is a one-time, 24-hour credential
 * for one user; using it sets the password, makes a `pending` user `active` (exactly once) and
 * consumes it, with every other token of the user, all in one transaction, so two concurrent uses
 * cannot both succeed and no older link sets the password again.
 */
@Injectable()
export class PasswordSetService {
  constructor(
    private readonly transactions: Transactions,
    private readonly tokens: PasswordSetTokensRepository,
    private readonly users: UsersRepository,
    private readonly callerRoles: CallerRoles,
    private readonly credentials: CredentialsRepository,
    private readonly hasher: PasswordHasher,
    private readonly outbox: OutboxRepository,
    private readonly relay: OutboxRelay,
    private readonly clock: Clock,
  ) {}

  /** Rejects (as setPassword would) unless the token is known, unused and unexpired; consumes nothing. */
  async checkToken(token: string): Promise<void> {
    const found = await this.tokens.findByToken(token);
    if (!found || found.usedAt || found.expiresAt <= this.clock.date()) throw invalidToken();
  }

  async setPassword(token: string, password: string): Promise<identityV1.User> {
    const problem = passwordProblem(password);
    if (problem) throw validationFailed([{ field: 'password', message: problem }]);
    const found = await this.tokens.findByToken(token);
    if (!found || found.usedAt || found.expiresAt <= this.clock.date()) throw invalidToken();
    const passwordHash = await this.hasher.hash(password);
    const user = await this.transactions.run(async (db) => {
      // The user's row before its tokens, in the order DeleteUser takes them: a deletion and a use of
      // the user's link wait for each other instead of deadlocking, and a link whose user is gone is
      // refused like any unknown link.
      if (!(await this.credentials.lockUser(db, found.userId))) throw invalidToken();
      // The change's time is read now, not before the hash: a login checked while argon2 ran still
      // found the old password, and auth ends only the sessions begun before this time.
      const now = this.clock.date();
      if (!(await this.tokens.consume(db, found.id, now))) throw invalidToken();
      await this.tokens.retireAllOf(db, found.userId, now);
      const { user, activated } = await this.credentials.setPassword(db, found.userId, passwordHash, now);
      // The user's first password: announced now even if it is disabled (enabled again it is `active`,
      // and the enable says nothing of an activation), so every activated user is announced once.
      if (activated) await this.outbox.append(db, USER_ACTIVATED, { user_id: user.id, org_id: user.orgId }, now);
      // Every earlier session of the user ends: auth revokes them on this event (docs/events.md).
      await this.outbox.append(db, USER_PASSWORD_CHANGED, passwordChanged(user, now), now);
      return user;
    });
    this.relay.nudge();
    return toUserMessage(user);
  }

  /**
   * `POST /v2/users/{id}/reset-password`: a new one-time token for a user of the caller's org, mailed
   * (an event for the mailer) or handed back to the caller (`send_email: false`). It replaces every
   * link the user still holds: an admin who sends a new link because an older one went astray (or
   * leaked) leaves only the new one working.
   */
  async requestReset(
    caller: Caller,
    userId: string,
    sendEmail: boolean,
  ): Promise<{ token: string; expiresAt: string }> {
    requireScope(caller, 'users:write');
    const user = await this.users.findInOrg(caller.orgId, userId);
    if (!user) throw noSuchUser();
    const issued = await this.transactions.run(async (db) => {
      await this.tokens.lockIssuing(db, user.id);
      // The user locked, then its links replaced: a user deleted since it was read gets no link (the
      // deletion took its links already), and a deletion that comes later waits and takes this one too.
      const locked = await this.users.lockInOrg(db, caller.orgId, user.id);
      if (!locked) throw noSuchUser();
      // A link sets the user's password: the caller must still be an active admin as the database says
      // now, not only as its token does (a disabled, deleted or demoted admin's token works until auth
      // has revoked it, up to a second later, and while NATS is down until it is back).
      await this.callerRoles.ofActiveAdmin(caller, db);
      // Read once the lock is held: the link issued last is the newest, and its mail comes last.
      const now = this.clock.date();
      await this.tokens.retireAllOf(db, user.id, now);
      const token = await this.tokens.issue(db, user.id, now);
      if (sendEmail) {
        await this.outbox.append(
          db,
          PASSWORD_RESET_REQUESTED,
          {
            user_id: user.id,
            org_id: user.orgId,
            email: user.email,
            display_name: user.displayName,
            locale: user.locale,
            token: token.token,
            expires_at: token.expiresAt.toISOString(),
            // Interface §3: a user created without its activation e-mail gets its link this way; the
            // mail then asks it to activate its account, not to reset a password it never had. So too
            // a user disabled before it ever set one (using the link activates it).
            activation: locked.activatedAt === null,
          },
          now,
          caller,
        );
      } else {
        // The caller holds a link that sets the password: the admin audit records who took it.
        await this.outbox.append(db, PASSWORD_RESET_ISSUED, { user_id: user.id, org_id: user.orgId }, now, caller);
      }
      return token;
    });
    this.relay.nudge();
    return sendEmail
      ? { token: '', expiresAt: '' }
      : { token: issued.token, expiresAt: issued.expiresAt.toISOString() };
  }
}
