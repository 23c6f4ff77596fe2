import { isUniqueViolation } from '@acct/database';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { Prisma, User } from '../generated/prisma/client';
import { isUuid } from '../ids';
import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';
import { isUserStatus, UserRecord, UserStatus } from './user';
import { normalizeEmail } from './user-rules';

export interface NewUserRecord {
  id: string;
  email: string;
  emailNormalized: string;
  phone: string | null;
  displayName: string;
  passwordHash: string | null;
  status: UserStatus;
  roles: string[];
  locale: string;
  timeZone: string;
  createdAt: Date;
  activatedAt: Date | null;
}

/** What an admin may change of a user (contract §7), already checked; absent members stay. */
export interface UserChanges {
  displayName?: string;
  roles?: string[];
  locale?: string;
  timeZone?: string;
  phone?: string | null;
  status?: UserStatus;
}

/** Where a page of ListUsers starts: after this user, in (created_at desc, id desc) order. */
export interface UserPosition {
  createdAt: Date;
  id: string;
}

export interface UserFilter {
  status?: UserStatus;
  /** An e-mail prefix or a display_name substring, case-insensitive. */
  q?: string;
}

/** `\`, `%` and `_` taken literally in a LIKE pattern. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (character) => `\\${character}`);

const emailTaken = () => new DomainError('email_taken', 'A user with this e-mail address already exists.');
const phoneTaken = () => new DomainError('phone_taken', 'A user with this mobile number already exists.');

/** The unique indexes' refusals as the contract names them; anything else is rethrown. */
function uniquenessError(error: unknown): unknown {
  if (isUniqueViolation(error, 'email_normalized')) return emailTaken();
  if (isUniqueViolation(error, 'phone')) return phoneTaken();
  return error;
}

/** A user of an org by id, as `User` (parameters: the user id, the org id). */
/** A user's columns as `toRecord` reads them, for the statements sent without Prisma's runtime. */
export const USER_COLUMNS = `
  id, org_id AS "orgId", email, email_normalized AS "emailNormalized", phone,
  display_name AS "displayName", status, roles, locale, timezone,
  created_at AS "createdAt", activated_at AS "activatedAt"`;

const FIND_IN_ORG = `SELECT ${USER_COLUMNS} FROM users WHERE id = $1::uuid AND org_id = $2::uuid`;

/** Users, always within one org: every read takes the org id, so no query can cross tenants. */
@Injectable()
export class UsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * The user, when it is in the org. Without `db` (the read path: GetUser, `/v2/users/me`) the one
   * statement runs straight on the pool, skipping Prisma's runtime (`DirectStatements`); with `db` it
   * runs on that client or transaction.
   */
  async findInOrg(orgId: string, id: string, db?: Db): Promise<UserRecord | null> {
    if (!isUuid(orgId) || !isUuid(id)) return null;
    const [row] = db
      ? await db.$queryRawUnsafe<User[]>(FIND_IN_ORG, id, orgId)
      : await this.prisma.direct.query<User>(FIND_IN_ORG, [id, orgId]);
    return row ? toRecord(row) : null;
  }

  /**
   * The user, row-locked until the transaction ends (`SELECT … FOR UPDATE`): concurrent changes to it
   * wait, so a check of its state (its entity tag) holds for the change that follows.
   */
  async lockInOrg(db: Prisma.TransactionClient, orgId: string, id: string): Promise<UserRecord | null> {
    if (!isUuid(orgId) || !isUuid(id)) return null;
    const locked = await db.$queryRaw<{ id: string }[]>`
      SELECT id FROM users WHERE id = ${id}::uuid AND org_id = ${orgId}::uuid FOR UPDATE`;
    return locked.length === 0 ? null : this.findInOrg(orgId, id, db);
  }

  /**
   * The user, its row held `FOR KEY SHARE` until the transaction ends: a change of it (each holds the
   * row `FOR UPDATE`: a disable, a deletion, a patch) waits for this transaction, or this read for the
   * change to commit, and then sees it.
   */
  async findInOrgForKeyShare(db: Prisma.TransactionClient, orgId: string, id: string): Promise<UserRecord | null> {
    if (!isUuid(orgId) || !isUuid(id)) return null;
    const [row] = await db.$queryRawUnsafe<User[]>(`${FIND_IN_ORG} FOR KEY SHARE`, id, orgId);
    return row ? toRecord(row) : null;
  }

  /** Active users holding `admin` in the org. */
  countActiveAdmins(db: Db, orgId: string): Promise<number> {
    return db.user.count({ where: { orgId, status: 'active', roles: { has: 'admin' } } });
  }

  /**
   * One page of the org's users, newest first: a single range scan of the index (org_id, created_at
   * desc, id desc) from `after`, no OFFSET and no count, so page 5,000 costs what page 1 does. Users
   * created while a client pages are newer than its cursor: they never shift the pages still to come.
   */
  async listInOrg(orgId: string, filter: UserFilter, after: UserPosition | undefined, limit: number) {
    if (!isUuid(orgId)) return [];
    const conditions = [Prisma.sql`org_id = ${orgId}::uuid`];
    if (after) conditions.push(Prisma.sql`(created_at, id) < (${after.createdAt}, ${after.id}::uuid)`);
    if (filter.status) conditions.push(Prisma.sql`status = ${filter.status}`);
    if (filter.q) {
      // The e-mail as it was normalised (JavaScript's lower case); the display name by Postgres' own
      // case-insensitive match of `q` as typed: lowering it here first would not be what ILIKE lowers
      // ('İ' becomes two characters, a final 'Σ' becomes 'ς'), and the name itself would not be found.
      // Both sides of the name's match in NFKC: a name is stored as typed, and 'é' typed as e and a
      // combining accent, or 'Ｏ' in full width, is the letter a person searching for it types.
      const emailPrefix = likeLiteral(normalizeEmail(filter.q));
      const name = likeLiteral(filter.q.normalize('NFKC'));
      conditions.push(
        Prisma.sql`(email_normalized LIKE ${`${emailPrefix}%`} OR normalize(display_name, NFKC) ILIKE ${`%${name}%`})`,
      );
    }
    const rows = await this.prisma.$queryRaw<User[]>`
      SELECT id, org_id AS "orgId", email, email_normalized AS "emailNormalized", phone,
             display_name AS "displayName", status, roles, locale, timezone,
             created_at AS "createdAt", activated_at AS "activatedAt"
      FROM users
      WHERE ${Prisma.join(conditions, ' AND ')}
      ORDER BY created_at DESC, id DESC
      LIMIT ${limit}`;
    return rows.map(toRecord);
  }

  /**
   * The database refuses a second user with the same normalised e-mail or phone (unique indexes),
   * however many requests race: that refusal is `email_taken` / `phone_taken`.
   */
  async create(orgId: string, user: NewUserRecord, db: Db = this.prisma): Promise<UserRecord> {
    try {
      const row = await db.user.create({
        data: {
          id: user.id,
          orgId,
          email: user.email,
          emailNormalized: user.emailNormalized,
          phone: user.phone,
          displayName: user.displayName,
          passwordHash: user.passwordHash,
          status: user.status,
          roles: user.roles,
          locale: user.locale,
          timezone: user.timeZone,
          createdAt: user.createdAt,
          activatedAt: user.activatedAt,
        },
      });
      return toRecord(row);
    } catch (error) {
      throw uniquenessError(error);
    }
  }

  /** Applies `changes` to a user the caller has locked (`lockInOrg`); a phone already taken is `phone_taken`. */
  async update(db: Prisma.TransactionClient, user: UserRecord, changes: UserChanges, at: Date): Promise<UserRecord> {
    try {
      const row = await db.user.update({
        where: { id: user.id, orgId: user.orgId },
        data: {
          displayName: changes.displayName,
          roles: changes.roles,
          locale: changes.locale,
          timezone: changes.timeZone,
          phone: changes.phone,
          status: changes.status,
          updatedAt: at,
        },
      });
      return toRecord(row);
    } catch (error) {
      throw uniquenessError(error);
    }
  }

  /** Removes a locked user and its one-time password tokens: its e-mail and phone are free again. */
  async delete(db: Prisma.TransactionClient, user: UserRecord): Promise<void> {
    await db.passwordSetToken.deleteMany({ where: { userId: user.id } });
    await db.user.delete({ where: { id: user.id, orgId: user.orgId } });
  }

  /** Where an e-mail is registered, in any org: only the operator's bootstrap asks this. */
  async findByEmailInAnyOrg(emailNormalized: string): Promise<UserRecord | null> {
    const row = await this.prisma.user.findUnique({ where: { emailNormalized } });
    return row ? toRecord(row) : null;
  }
}

type UserRow = Pick<
  User,
  | 'id'
  | 'orgId'
  | 'email'
  | 'phone'
  | 'displayName'
  | 'status'
  | 'roles'
  | 'locale'
  | 'timezone'
  | 'createdAt'
  | 'activatedAt'
>;

export function toRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    orgId: row.orgId,
    email: row.email,
    phone: row.phone,
    displayName: row.displayName,
    status: isUserStatus(row.status) ? row.status : 'pending',
    roles: row.roles,
    locale: row.locale,
    timeZone: row.timezone,
    createdAt: row.createdAt,
    activatedAt: row.activatedAt,
  };
}
