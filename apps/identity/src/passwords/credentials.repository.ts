import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';
import { UserRecord } from '../users/user';
import { toRecord } from '../users/users.repository';

export interface Credentials {
  user: UserRecord;
  /** argon2id PHC string; null while the user has no password (activation pending). */
  passwordHash: string | null;
}

/** The login view of users: the only reader and writer of password hashes. */
@Injectable()
export class CredentialsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** By normalised e-mail, which is unique across all orgs (a login names no org). */
  async findByEmail(emailNormalized: string): Promise<Credentials | null> {
    const row = await this.prisma.user.findUnique({ where: { emailNormalized } });
    return row ? { user: toRecord(row), passwordHash: row.passwordHash } : null;
  }

  /**
   * Sets a user's password; a `pending` user becomes `active` at `now` (exactly once: `activated`
   * says whether this call did it).
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
    const row = await db.user.update({ where: { id: userId }, data: { passwordHash } });
    return { user: toRecord(row), activated: activated.count === 1 };
  }
}
