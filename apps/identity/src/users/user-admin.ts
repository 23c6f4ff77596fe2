import { Caller, requireRole, requireScope } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
import { OrgsRepository } from '../orgs/orgs.repository';
import { Transactions } from '../prisma/transactions';
import { CallerRoles } from './caller-roles';
import { USERS_WRITE_SCOPE } from './create-user.service';
import { USERS_READ_SCOPE } from './get-user.service';
import { etagOf, UserRecord } from './user';
import { UsersRepository } from './users.repository';

/** Contract §7: an org's users are administered by its admins (scope first, then the role). */
export function requireAdmin(caller: Caller, scope: typeof USERS_READ_SCOPE | typeof USERS_WRITE_SCOPE): void {
  requireScope(caller, scope);
  requireRole(caller, 'admin', "Only the organization's admins may administer its users.");
}

export const noSuchUser = () => new DomainError('not_found', 'No such user.');

/**
 * RFC 9110 §13.1.1 with strong comparison: `*` matches any user, otherwise one of the tags must be
 * the user's current one. No tags: the change is unconditional.
 */
export function requireMatch(ifMatch: readonly string[], user: UserRecord): void {
  if (ifMatch.length === 0 || ifMatch.includes('*') || ifMatch.includes(etagOf(user))) return;
  throw new DomainError(
    'precondition_failed',
    'The user has changed since you read it (If-Match no longer matches its ETag); read it again.',
  );
}

/**
 * RFC 9110 §13.1.2: `If-None-Match` is false when it is `*` (the user exists) or names the user's
 * current tag (weak comparison: the gateway sends the opaque tags, `W/` dropped), and a change must
 * then not be made (412). No tags: no condition.
 */
export function requireNoneMatch(ifNoneMatch: readonly string[], user: UserRecord): void {
  if (!ifNoneMatch.includes('*') && !ifNoneMatch.includes(etagOf(user))) return;
  throw new DomainError(
    'precondition_failed',
    'The user is in a state If-None-Match names (its current ETag, or * for any); nothing was changed.',
  );
}

/** The conditions of a change (RFC 9110 §13.1.1–2): the entity tags of `If-Match` and `If-None-Match`. */
export interface Preconditions {
  /** `*` or tags, one of which must be the user's current one; empty: unconditional. */
  ifMatch: readonly string[];
  /** `*` or tags, none of which may be the user's current one; empty: unconditional. */
  ifNoneMatch?: readonly string[];
}

const lastAdmin = (detail: string) => new DomainError('last_admin', detail);

/**
 * One admin change to one user of the caller's org, in one transaction that holds the org's row lock
 * (every admin change of an org runs one at a time) and the user's. Inside it the If-Match and If-None-Match checks,
 * the last-admin rule and the change see the same state, whatever else runs concurrently. The
 * caller must still be an active admin then; `change` gets the roles it holds now (`CallerRoles`).
 */
@Injectable()
export class UserAdminChanges {
  constructor(
    private readonly transactions: Transactions,
    private readonly orgs: OrgsRepository,
    private readonly users: UsersRepository,
    private readonly callerRoles: CallerRoles,
  ) {}

  async run<T>(
    caller: Caller,
    userId: string,
    preconditions: Preconditions,
    change: (db: Prisma.TransactionClient, user: UserRecord, callerRoles: readonly string[]) => Promise<T>,
  ): Promise<T> {
    requireAdmin(caller, USERS_WRITE_SCOPE);
    return this.transactions.run(async (db) => {
      await this.orgs.lock(db, caller.orgId);
      const callerRoles = await this.callerRoles.ofActiveAdmin(caller, db);
      const user = await this.users.lockInOrg(db, caller.orgId, userId);
      if (!user) throw noSuchUser();
      requireMatch(preconditions.ifMatch, user);
      requireNoneMatch(preconditions.ifNoneMatch ?? [], user);
      return change(db, user, callerRoles);
    });
  }

  /**
   * Contract §7: an admin cannot disable or delete itself, and the org keeps at least one active
   * admin. Call inside `run` before `user` stops being an active admin.
   */
  async keepAnAdmin(db: Prisma.TransactionClient, caller: Caller, user: UserRecord, action: string): Promise<void> {
    if (caller.kind === 'user' && caller.subject === user.id) {
      throw lastAdmin(`You cannot ${action} yourself; another admin can.`);
    }
    await this.keepAnotherAdmin(db, user, action);
  }

  /** The org keeps at least one active admin once `user` is no longer one. */
  async keepAnotherAdmin(db: Prisma.TransactionClient, user: UserRecord, action: string): Promise<void> {
    if (user.status !== 'active' || !user.roles.includes('admin')) return;
    if ((await this.users.countActiveAdmins(db, user.orgId)) <= 1) {
      throw lastAdmin(`You cannot ${action} the organization's last active admin.`);
    }
  }
}
