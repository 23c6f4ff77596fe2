import { Caller } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { identityV1 } from '@acct/contracts';
import { USER_DISABLED, USER_ENABLED } from '@acct/events';
import { Injectable } from '@nestjs/common';

import { OutboxRelay } from '../outbox/outbox.relay';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PasswordSetTokensRepository } from '../password-set-tokens/password-set-tokens.repository';
import { toUserMessage } from './user';
import { UserAdminChanges } from './user-admin';
import { UsersRepository } from './users.repository';

/**
 * `DisableUser` / `EnableUser` (contract §7). A disabled user cannot sign in, and the
 * `identity.user.disabled` event, written in the same transaction, has auth revoke its tokens. Its
 * activation and reset links issued before go too: a user disabled because its mailbox or account
 * was taken over would otherwise have a password set by whoever holds a link, and be theirs once
 * enabled again (a link an admin issues after the disable, to hand over on enabling, works). Both
 * are idempotent: disabling a disabled user changes nothing and writes no event. Enabling writes
 * `identity.user.enabled` (for the admin-action audit), and nothing when the user was not disabled. Enabling gives back
 * the status the user had: `active` once it has set a password, else `pending`.
 */
@Injectable()
export class UserStatusService {
  constructor(
    private readonly changes: UserAdminChanges,
    private readonly users: UsersRepository,
    private readonly outbox: OutboxRepository,
    private readonly relay: OutboxRelay,
    private readonly passwordSetTokens: PasswordSetTokensRepository,
    private readonly clock: Clock,
  ) {}

  async disable(
    caller: Caller,
    id: string,
    ifMatch: readonly string[],
    ifNoneMatch: readonly string[] = [],
  ): Promise<identityV1.User> {
    const user = await this.changes.run(caller, id, { ifMatch, ifNoneMatch }, async (db, user) => {
      if (user.status === 'disabled') return user;
      await this.changes.keepAnAdmin(db, caller, user, 'disable');
      const now = this.clock.date();
      const disabled = await this.users.update(db, user, { status: 'disabled' }, now);
      await this.passwordSetTokens.retireAllOf(db, user.id, now);
      await this.outbox.append(
        db,
        USER_DISABLED,
        { user_id: user.id, org_id: user.orgId, occurred_at: now.toISOString() },
        now,
        caller,
      );
      return disabled;
    });
    this.relay.nudge();
    return toUserMessage(user);
  }

  async enable(
    caller: Caller,
    id: string,
    ifMatch: readonly string[],
    ifNoneMatch: readonly string[] = [],
  ): Promise<identityV1.User> {
    const user = await this.changes.run(caller, id, { ifMatch, ifNoneMatch }, async (db, user) => {
      if (user.status !== 'disabled') return user;
      const now = this.clock.date();
      const enabled = await this.users.update(db, user, { status: user.activatedAt ? 'active' : 'pending' }, now);
      await this.outbox.append(db, USER_ENABLED, { user_id: user.id, org_id: user.orgId }, now, caller);
      return enabled;
    });
    this.relay.nudge();
    return toUserMessage(user);
  }
}
