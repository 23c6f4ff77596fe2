import { Caller, requireRole, requireScope, requireUser, USERS_WRITE_SCOPE } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { IdentityClient, requireStillAdmin, UserLoginNames } from '../identity/identity.client';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The user an admin action of contract §7 is aimed at: the caller (a user, or a client acting with
 * its own roles) must hold users:write and role admin, and the user one identity shows the caller (its own org), asked with the
 * caller's own token; an unknown user and another org's are both 404 (no existence oracle). A user
 * caller must still be an active admin as identity says now, whatever its token says.
 */
@Injectable()
export class AdminTarget {
  constructor(private readonly identity: IdentityClient) {}

  async resolve(caller: Caller, callerToken: string, userId: string, detail: string): Promise<UserLoginNames> {
    // The role first: a member or viewer is told it is not an admin, not which scope it lacks.
    requireRole(caller, 'admin', detail);
    requireScope(caller, USERS_WRITE_SCOPE);
    await requireStillAdmin(this.identity, caller, callerToken, detail);
    if (userId === 'me') requireUser(caller, 'A client is no user: name the user by its id.');
    const id = userId === 'me' ? caller.subject : userId;
    const user = UUID.test(id) ? await this.identity.loginNamesOf(callerToken, id) : undefined;
    if (!user) throw new DomainError('not_found', 'No such user.');
    return user;
  }
}
