import { Caller } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import { hasControlCharacters } from '@acct/user-fields';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';

import { isUuid } from '../ids';
import { FieldErrors } from '../validation';
import { CallerRoles } from './caller-roles';
import { USERS_READ_SCOPE } from './get-user.service';
import { isUserStatus, toUserMessage, USER_STATUSES, UserStatus } from './user';
import { requireAdmin } from './user-admin';
import { UserPosition, UsersRepository } from './users.repository';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const Q_MAX_LENGTH = 254;

export interface ListUsersQuery {
  status: string;
  q: string;
  /** 0: the default. */
  limit: number;
  cursor: string;
}

/** The latest instant a JS `Date` holds (ECMA-262 §21.4.1.1); a later `t` would be an Invalid Date. */
const MAX_TIME = 8.64e15;

/** A cursor is the position of a page's last user, opaque to clients (base64url JSON). */
const cursorShape = z.object({ t: z.int().nonnegative().max(MAX_TIME), i: z.string().refine(isUuid) }).strict();

export const encodeCursor = (position: UserPosition): string =>
  Buffer.from(JSON.stringify({ t: position.createdAt.getTime(), i: position.id })).toString('base64url');

function decodeCursor(cursor: string): UserPosition | undefined {
  try {
    const { t, i } = cursorShape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { createdAt: new Date(t), id: i };
  } catch {
    return undefined;
  }
}

interface ValidQuery {
  status?: UserStatus;
  q?: string;
  limit: number;
  after?: UserPosition;
}

function validateQuery(query: ListUsersQuery): ValidQuery {
  const errors = new FieldErrors();
  const valid: ValidQuery = { limit: query.limit === 0 ? DEFAULT_PAGE_SIZE : query.limit };
  if (query.status !== '') {
    if (isUserStatus(query.status)) valid.status = query.status;
    else errors.check('status', `must be one of ${USER_STATUSES.join(', ')}`);
  }
  const q = query.q.trim();
  if (q !== '') {
    if (q.length > Q_MAX_LENGTH || hasControlCharacters(q)) {
      errors.check('q', `must be at most ${Q_MAX_LENGTH} characters, without control characters`);
    } else valid.q = q;
  }
  if (!Number.isInteger(valid.limit) || valid.limit < 1 || valid.limit > MAX_PAGE_SIZE) {
    errors.check('limit', `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  if (query.cursor !== '') {
    valid.after = decodeCursor(query.cursor);
    errors.check('cursor', valid.after ? undefined : 'must be a next_cursor this API returned');
  }
  errors.throwIfAny();
  return valid;
}

/**
 * `ListUsers` (contract §7): the caller's org's users, newest first, for its admins. One indexed
 * query per page (see `UsersRepository.listInOrg`); one row more than asked tells whether a next page exists.
 */
@Injectable()
export class ListUsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly callerRoles: CallerRoles,
  ) {}

  async list(caller: Caller, query: ListUsersQuery): Promise<identityV1.ListUsersResponse> {
    requireAdmin(caller, USERS_READ_SCOPE);
    const { status, q, limit, after } = validateQuery(query);
    // The caller must still be an active admin as the database says now, not only as its token does
    // (a disabled, deleted or demoted admin's token works until auth has revoked it, up to a second
    // later, and while NATS is down until it is back): the page holds every user's e-mail and phone.
    const [rows] = await Promise.all([
      this.users.listInOrg(caller.orgId, { status, q }, after, limit + 1),
      this.callerRoles.ofActiveAdmin(caller),
    ]);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      users: page.map(toUserMessage),
      nextCursor: rows.length > limit && last ? encodeCursor(last) : '',
    };
  }
}
