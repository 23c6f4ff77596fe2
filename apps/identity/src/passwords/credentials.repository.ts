import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { UserRecord } from '../users/user';
import { toRecord } from '../users/users.repository';

export interface Credentials {
  user: UserRecord;
  /** argon2id PHC string; null while the user has no password (activation pending). */
  passwordHash: string | null;
}

/** The login view of users: the only reader of password hashes. */
@Injectable()
export class CredentialsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** By normalised e-mail, which is unique across all orgs (a login names no org). */
  async findByEmail(emailNormalized: string): Promise<Credentials | null> {
    const row = await this.prisma.user.findUnique({ where: { emailNormalized } });
    return row ? { user: toRecord(row), passwordHash: row.passwordHash } : null;
  }
}
