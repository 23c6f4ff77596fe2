import { Injectable } from '@nestjs/common';

import { Org } from '../generated/prisma/client';
import { isUuid } from '../ids';
import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';
import { OrgRecord } from './org';

@Injectable()
export class OrgsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Every user creation asks, so it is one prepared statement without Prisma's runtime (`DirectStatements`). */
  async findById(id: string): Promise<OrgRecord | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.prisma.direct.query<OrgRecord>(FIND_BY_ID, [id]);
    return row ?? null;
  }

  async findByName(name: string, db: Db = this.prisma): Promise<OrgRecord | null> {
    const row = await db.org.findUnique({ where: { name } });
    return row ? toRecord(row) : null;
  }

  /**
   * Row-locks the org until the transaction ends: the one serial section of an org's admin changes,
   * so two admins disabling each other at once are judged one after the other (the last-admin rule).
   * `FOR NO KEY UPDATE`, not `FOR UPDATE`: a user creation's foreign-key check takes the org `FOR KEY
   * SHARE` after its row holds its e-mail and phone, and a patch that gives a user that phone under
   * this lock waits for the creation, so a creation waiting for this lock deadlocked with it.
   */
  async lock(db: Db, id: string): Promise<void> {
    if (isUuid(id)) await db.$queryRaw`SELECT id FROM orgs WHERE id = ${id}::uuid FOR NO KEY UPDATE`;
  }

  /**
   * The org of this name, created with `id` when there is none (INSERT … ON CONFLICT DO NOTHING):
   * concurrent callers all end up with the same org.
   */
  async ensure(name: string, id: string, now: Date, db: Db = this.prisma): Promise<OrgRecord> {
    await db.org.createMany({ data: [{ id, name, createdAt: now }], skipDuplicates: true });
    const org = await this.findByName(name, db);
    if (!org) throw new Error(`org ${JSON.stringify(name)} vanished right after it was ensured`);
    return org;
  }
}

const FIND_BY_ID = `SELECT id, name, created_at AS "createdAt" FROM orgs WHERE id = $1::uuid`;

const toRecord = (row: Org): OrgRecord => ({ id: row.id, name: row.name, createdAt: row.createdAt });
