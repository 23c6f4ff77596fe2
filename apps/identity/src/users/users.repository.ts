import { isUniqueViolation } from '@acct/database';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { User } from '../generated/prisma/client';
import { isUuid } from '../ids';
import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';
import { UserRecord, UserStatus } from './user';

export interface NewUserRecord {
  id: string;
  email: string;
  emailNormalized: string;
  displayName: string;
  passwordHash: string | null;
  status: UserStatus;
  roles: string[];
  locale: string;
  timeZone: string;
  createdAt: Date;
  activatedAt: Date | null;
}

/** Users, always within one org: every read takes the org id, so no query can cross tenants. */
@Injectable()
export class UsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  async findInOrg(orgId: string, id: string): Promise<UserRecord | null> {
    if (!isUuid(orgId) || !isUuid(id)) return null;
    const row = await this.prisma.user.findFirst({ where: { id, orgId } });
    return row ? toRecord(row) : null;
  }

  /**
   * The database refuses a second user with the same normalised e-mail (unique index), however many
   * requests race: that refusal is `email_taken`.
   */
  async create(orgId: string, user: NewUserRecord, db: Db = this.prisma): Promise<UserRecord> {
    try {
      const row = await db.user.create({
        data: {
          id: user.id,
          orgId,
          email: user.email,
          emailNormalized: user.emailNormalized,
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
      if (isUniqueViolation(error, 'email_normalized')) {
        throw new DomainError('email_taken', 'A user with this e-mail address already exists.');
      }
      throw error;
    }
  }

  /** Where an e-mail is registered, in any org: only the operator's bootstrap asks this. */
  async findByEmailInAnyOrg(emailNormalized: string): Promise<UserRecord | null> {
    const row = await this.prisma.user.findUnique({ where: { emailNormalized } });
    return row ? toRecord(row) : null;
  }
}

export function toRecord(row: User): UserRecord {
  return {
    id: row.id,
    orgId: row.orgId,
    email: row.email,
    displayName: row.displayName,
    status: row.status === 'active' ? 'active' : 'pending',
    roles: row.roles,
    locale: row.locale,
    timeZone: row.timezone,
    createdAt: row.createdAt,
  };
}
