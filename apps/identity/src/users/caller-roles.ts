import { Caller, scopesOfRoles } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
import { Db } from '../prisma/transactions';
import { UserRecord } from './user';
import { UsersRepository } from './users.repository';

/**
 * What a caller holds now, for granting roles (the role ceiling of contract §3 and §7): a user's
 * current roles in the database, not its token's (a token issued before a demotion cannot hand out
 * more); a client's configured roles.
 */
@Injectable()
export class CallerRoles {
  constructor(private readonly users: UsersRepository) {}

  async of(caller: Caller, db?: Db): Promise<readonly string[]> {
    switch (caller.kind) {
      case 'user': {
        const self = await this.users.findInOrg(caller.orgId, caller.subject, db);
        if (!self) throw new DomainError('forbidden', 'Your account does not exist in this organization.');
        return self.roles;
      }
      case 'client':
        return caller.roles;
    }
  }

  /**
   * What `of` says, of a caller that must still be active and whose roles must still carry `scope`,
   * read inside the creating transaction with the caller's row held (`FOR KEY SHARE`): a user
   * disabled, deleted or demoted (to a role without `scope`) before this creation is refused whatever
   * its token still says (its revocation reaches the token's verifiers up to a second later, and while
   * NATS is down not until it is back), and one changed so while it runs waits for it to commit.
   */
  async ofActive(caller: Caller, db: Prisma.TransactionClient, scope: string): Promise<readonly string[]> {
    if (caller.kind === 'client') return caller.roles;
    const self = await this.users.findInOrgForKeyShare(db, caller.orgId, caller.subject);
    const roles = rolesIfActive(self, undefined, 'Only active users of the organization may create its users.');
    if (!scopesOfRoles(roles).includes(scope)) {
      throw new DomainError('forbidden', `Your roles no longer allow ${scope}.`);
    }
    return roles;
  }

  /**
   * What `of` says, of a caller that must still be an active admin of its org as the database says
   * under the org's lock (`UserAdminChanges`): a user's token may predate a change judged just before
   * this one (it was disabled, deleted or lost `admin` while its request waited for the lock), and the
   * token's revocation reaches this check too late. A client acts with its configured roles. One
   * look-up of the caller answers both questions. Without `db` (a read: ListUsers) it reads the
   * caller's row as committed now.
   */
  async ofActiveAdmin(caller: Caller, db?: Db): Promise<readonly string[]> {
    if (caller.kind === 'client') return caller.roles;
    const self = await this.users.findInOrg(caller.orgId, caller.subject, db);
    return rolesIfActive(self, 'admin', "Only the organization's active admins may administer its users.");
  }
}

/** The roles of a user caller's own row, when it is still active (and holds `role`); else `forbidden`. */
function rolesIfActive(self: UserRecord | null, role: string | undefined, detail: string): readonly string[] {
  if (self?.status !== 'active' || (role !== undefined && !self.roles.includes(role))) {
    throw new DomainError('forbidden', detail);
  }
  return self.roles;
}
