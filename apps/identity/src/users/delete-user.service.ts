import { Caller } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { USER_DELETED } from '@acct/events';
import { Injectable } from '@nestjs/common';

import { OutboxRelay } from '../outbox/outbox.relay';
import { OutboxRepository } from '../outbox/outbox.repository';
import { UserAdminChanges } from './user-admin';
import { UsersRepository } from './users.repository';

/**
 * `DeleteUser` (contract §7): the user is removed (its e-mail and phone can be registered again), with
 * the last-admin rule of disabling. The `identity.user.deleted` event, in the same transaction, has
 * auth revoke its tokens and the platform give the org's "Users" quota a unit back.
 */
@Injectable()
export class DeleteUserService {
  constructor(
    private readonly changes: UserAdminChanges,
    private readonly users: UsersRepository,
    private readonly outbox: OutboxRepository,
    private readonly relay: OutboxRelay,
    private readonly clock: Clock,
  ) {}

  async delete(
    caller: Caller,
    id: string,
    ifMatch: readonly string[],
    ifNoneMatch: readonly string[] = [],
  ): Promise<void> {
    await this.changes.run(caller, id, { ifMatch, ifNoneMatch }, async (db, user) => {
      await this.changes.keepAnAdmin(db, caller, user, 'delete');
      const now = this.clock.date();
      await this.users.delete(db, user);
      await this.outbox.append(
        db,
        USER_DELETED,
        { user_id: user.id, org_id: user.orgId, occurred_at: now.toISOString() },
        now,
        caller,
      );
    });
    this.relay.nudge();
  }
}
