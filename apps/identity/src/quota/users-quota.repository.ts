import { Injectable } from '@nestjs/common';

import { Db } from '../prisma/transactions';

/** The count the Users quota is enforced on: an org's users, read under a per-org lock. */
@Injectable()
export class UsersQuotaRepository {
  /**
   * Takes the org's quota lock for the rest of the transaction (concurrent creations in one org queue
   * here) and answers how many users the org has.
   */
  async lockAndCount(db: Db, orgId: string): Promise<number> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`users-quota:${orgId}`}))`;
    return db.user.count({ where: { orgId } });
  }
}
