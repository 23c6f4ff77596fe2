import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';
import { normalizePhone } from '../users/phone';
import { UserRecord } from '../users/user';
import { normalizeEmail } from '../users/user-rules';
import { toRecord, USER_COLUMNS } from '../users/users.repository';

export interface Credentials {
  user: UserRecord;
  /** argon2id PHC string; null while the user has no password (activation pending). */
  passwordHash: string | null;
}

/** A login username as it is looked up: an e-mail (lower-cased) or a mobile number (E.164). */
export type LoginName = { email: string } | { phone: string };

/**
 * Interface §4.2: the username is an e-mail or a mobile number. One with `@` is an e-mail; anything
 * else is read as a phone in the spellings the users API accepts (`+86 138-0013-8000`, `0086…`), and
 * when it is not one, as the e-mail nobody has.
 */
export function loginNameOf(username: string): LoginName {
  if (!username.includes('@')) {
    const phone = normalizePhone(username);
    if ('phone' in phone) return { phone: phone.phone };
  }
  return { email: normalizeEmail(username) };
}

type CredentialsRow = Parameters<typeof toRecord>[0] & { passwordHash: string | null };

const FIND_BY_EMAIL = `SELECT ${USER_COLUMNS}, password_hash AS "passwordHash" FROM users WHERE email_normalized = $1`;
const FIND_BY_PHONE = `SELECT ${USER_COLUMNS}, password_hash AS "passwordHash" FROM users WHERE phone = $1`;
/**
 * The same, for a password check: `FOR KEY SHARE` waits for a change of the user in progress (every
 * change holds the row `FOR UPDATE`: a password set, a disable, a deletion) and then reads the row as
 * it committed. Without it a login read the old password (or `active`) after the change's time, which
 * is what auth ends the sessions before, so its session survived the change.
 */
const CHECK_BY_EMAIL = `${FIND_BY_EMAIL} FOR KEY SHARE`;
const CHECK_BY_PHONE = `${FIND_BY_PHONE} FOR KEY SHARE`;

/** The login view of users: the only reader and writer of password hashes. */
@Injectable()
export class CredentialsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * By normalised e-mail or phone, each unique across all orgs (a login names no org). Every login asks
   * twice (its login key, then its password check), so each is one prepared statement without
   * Prisma's runtime (`DirectStatements`).
   */
  find(name: LoginName): Promise<Credentials | null> {
    return this.query(name, FIND_BY_EMAIL, FIND_BY_PHONE);
  }

  /** As `find`, once a change of the user in progress has committed: what a password is checked against. */
  findForPasswordCheck(name: LoginName): Promise<Credentials | null> {
    return this.query(name, CHECK_BY_EMAIL, CHECK_BY_PHONE);
  }

  private async query(name: LoginName, byEmail: string, byPhone: string): Promise<Credentials | null> {
    const [row] =
      'phone' in name
        ? await this.prisma.direct.query<CredentialsRow>(byPhone, [name.phone])
        : await this.prisma.direct.query<CredentialsRow>(byEmail, [name.email]);
    return row ? { user: toRecord(row), passwordHash: row.passwordHash } : null;
  }

  /**
   * Replaces the user's password hash by the same password's `rehashed` one, unless the hash changed
   * since it was read as `checked` (a password set meanwhile wins). Nothing else of the user changes:
   * the password is the same, so no session ends and the user's ETag stays.
   */
  async upgradeHash(userId: string, checked: string, rehashed: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE users SET password_hash = ${rehashed} WHERE id = ${userId}::uuid AND password_hash = ${checked}`;
  }

  /**
   * Locks the user's row until the transaction ends (`SELECT … FOR UPDATE`), by id in any org (a
   * password:set token names only its user); false when there is no such user.
   */
  async lockUser(db: Db, userId: string): Promise<boolean> {
    const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
    return locked.length === 1;
  }

  /**
   * Sets a user's password; a `pending` user becomes `active` at `now`. `activated` says whether this
   * call set the user's first password (exactly once per user): also when it was disabled then, as it
   * is `active` once enabled and no later call would say so.
   */
  async setPassword(
    db: Db,
    userId: string,
    passwordHash: string,
    now: Date,
  ): Promise<{ user: UserRecord; activated: boolean }> {
    const activated = await db.user.updateMany({
      where: { id: userId, status: 'pending' },
      data: { status: 'active', activatedAt: now, passwordHash },
    });
    // A user that set its first password while disabled has set one all the same: enabled again, it is
    // `active` (activated_at is what EnableUser reads), not `pending` with its link already used.
    const firstWhileDisabled = await db.user.updateMany({
      where: { id: userId, activatedAt: null },
      data: { activatedAt: now },
    });
    const row = await db.user.update({ where: { id: userId }, data: { passwordHash } });
    return { user: toRecord(row), activated: activated.count === 1 || firstWhileDisabled.count === 1 };
  }
}
