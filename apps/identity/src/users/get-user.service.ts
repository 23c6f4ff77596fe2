import { Caller, requireScope, USERS_WRITE_SCOPE } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { toUserMessage } from './user';
import { UsersRepository } from './users.repository';

export const USERS_READ_SCOPE = 'users:read';
export const ME = 'me';

/**
 * `GetUser`: a user of the caller's own org, or `me`. Everything else is `not_found`, whether it
 * exists in another org, does not exist, or is not even an id: no existence oracle. It needs
 * users:read, or users:write: whoever may change the org's users reads each one back from every change
 * (PATCH, disable, enable), and auth asks this with an admin's own token before acting for it (an
 * unlock, which takes users:write alone, was refused for want of users:read).
 */
@Injectable()
export class GetUserService {
  constructor(private readonly users: UsersRepository) {}

  async get(caller: Caller, id: string): Promise<identityV1.User> {
    if (!caller.scopes.has(USERS_WRITE_SCOPE)) requireScope(caller, USERS_READ_SCOPE);
    const userId = id === ME ? this.selfOf(caller) : id;
    const user = userId === undefined ? null : await this.users.findInOrg(caller.orgId, userId);
    if (!user) throw new DomainError('not_found', 'No such user.');
    return toUserMessage(user);
  }

  /** `me` is the calling user; a client is no user. */
  private selfOf(caller: Caller): string | undefined {
    switch (caller.kind) {
      case 'user':
        return caller.subject;
      case 'client':
        return undefined;
    }
  }
}
