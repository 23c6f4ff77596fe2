import { Caller, mayGrant } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { identityV1 } from '@acct/contracts';
import { USER_PATCH_FIELDS, USER_UPDATED } from '@acct/events';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { OutboxRelay } from '../outbox/outbox.relay';
import { OutboxRepository } from '../outbox/outbox.repository';
import { USERS_WRITE_SCOPE } from './create-user.service';
import { toUserMessage, UserRecord } from './user';

type UserPatchField = (typeof USER_PATCH_FIELDS)[number];
import { requireAdmin, UserAdminChanges } from './user-admin';
import { UserPatchRequest, validateUserPatch } from './user-rules';
import { UsersRepository } from './users.repository';

const sameRoles = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((role, index) => role === [...b].sort()[index]);

/** The fields of contract §7's patch whose value differs between the two states (event names). */
function changedFields(before: UserRecord, after: UserRecord): UserPatchField[] {
  const changed: UserPatchField[] = [];
  if (before.displayName !== after.displayName) changed.push('display_name');
  if (!sameRoles(before.roles, after.roles)) changed.push('roles');
  if (before.phone !== after.phone) changed.push('phone');
  if (before.locale !== after.locale) changed.push('profile.locale');
  if (before.timeZone !== after.timeZone) changed.push('profile.timezone');
  return changed;
}

/**
 * `UpdateUser` (contract §7): a merge patch of `display_name`, `roles`, `profile.locale`,
 * `profile.timezone` and `phone` by an org's admin, with the rules of creation: roles only up to the
 * caller's own (judged by what it holds now), and the org keeps an active admin. A patch that changes
 * something writes `identity.user.updated` (the changed fields' names, and the roles before and after)
 * in the same transaction, for the admin-action audit.
 */
@Injectable()
export class UpdateUserService {
  constructor(
    private readonly changes: UserAdminChanges,
    private readonly users: UsersRepository,
    private readonly outbox: OutboxRepository,
    private readonly relay: OutboxRelay,
    private readonly clock: Clock,
  ) {}

  async update(
    caller: Caller,
    id: string,
    ifMatch: readonly string[],
    patch: UserPatchRequest,
    ifNoneMatch: readonly string[] = [],
  ): Promise<identityV1.User> {
    requireAdmin(caller, USERS_WRITE_SCOPE);
    const valid = validateUserPatch(patch);
    const message = await this.changes.run(caller, id, { ifMatch, ifNoneMatch }, async (db, user, callerRoles) => {
      if (valid.roles) {
        if (!mayGrant(callerRoles, valid.roles)) {
          throw new DomainError('forbidden', 'You may not grant a role above your own.');
        }
        if (!valid.roles.includes('admin')) await this.changes.keepAnotherAdmin(db, user, 'take admin from');
      }
      const now = this.clock.date();
      // The same roles in another order change nothing (no event, no audit entry): nor does the User
      // a client sees, or its ETag (an admin holding it would be refused a change for nothing).
      const ordered = valid.roles && sameRoles(valid.roles, user.roles) ? user.roles : valid.roles;
      const updated = await this.users.update(db, user, { ...valid, roles: ordered }, now);
      const changed = changedFields(user, updated);
      if (changed.length > 0) {
        const roles = changed.includes('roles') ? { roles_before: user.roles, roles_after: updated.roles } : {};
        await this.outbox.append(
          db,
          USER_UPDATED,
          { user_id: user.id, org_id: user.orgId, changed, ...roles },
          now,
          caller,
        );
      }
      return toUserMessage(updated);
    });
    this.relay.nudge();
    return message;
  }
}
