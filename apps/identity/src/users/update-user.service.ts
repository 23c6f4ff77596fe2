import { Caller, mayGrant } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { identityV1 } from '@acct/contracts';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { CallerRoles } from './caller-roles';
import { USERS_WRITE_SCOPE } from './create-user.service';
import { toUserMessage } from './user';
import { requireAdmin, UserAdminChanges } from './user-admin';
import { UserPatchRequest, validateUserPatch } from './user-rules';
import { UsersRepository } from './users.repository';

/**
 * `UpdateUser` (contract §7): a merge patch of `display_name`, `roles`, `profile.locale`,
 * `profile.timezone` and `phone` by an org's admin, with the rules of creation: roles only up to the
 * caller's own (judged by what it holds now), and the org keeps an active admin.
 */
@Injectable()
export class UpdateUserService {
  constructor(
    private readonly changes: UserAdminChanges,
    private readonly callerRoles: CallerRoles,
    private readonly users: UsersRepository,
    private readonly clock: Clock,
  ) {}

  async update(
    caller: Caller,
    id: string,
    ifMatch: readonly string[],
    patch: UserPatchRequest,
  ): Promise<identityV1.User> {
    requireAdmin(caller, USERS_WRITE_SCOPE);
    const valid = validateUserPatch(patch);
    return this.changes.run(caller, id, ifMatch, async (db, user) => {
      if (valid.roles) {
        if (!mayGrant(await this.callerRoles.of(caller, db), valid.roles)) {
          throw new DomainError('forbidden', 'You may not grant a role above your own.');
        }
        if (!valid.roles.includes('admin')) await this.changes.keepAnotherAdmin(db, user, 'take admin from');
      }
      const updated = await this.users.update(db, user, valid, this.clock.date());
      return toUserMessage(updated);
    });
  }
}
