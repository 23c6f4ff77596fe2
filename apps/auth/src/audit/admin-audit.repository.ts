import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { AuditPosition, olderThan } from './audit-cursor';

/** What changed in an admin action (field names, roles before and after); never a secret. */
export type AdminAuditDetails = Record<string, string | string[]>;

/** One recorded admin action. */
export interface AdminAuditRecord {
  id: string;
  at: Date;
  orgId: string;
  actorId: string;
  action: string;
  targetType: string;
  targetId: string;
  requestId: string;
  details: AdminAuditDetails | null;
}

const detailsOf = (value: Prisma.JsonValue | null): AdminAuditDetails | null =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as AdminAuditDetails) : null;

/** The `admin_audit` table. */
@Injectable()
export class AdminAuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Adds the entry; an entry with the same id is kept as it was (a redelivered event). Raw, not
   * Prisma's `createMany({ skipDuplicates })`, which Prisma compiles anew on every call (no cached plan
   * for createMany), and every user identity creates or changes is one entry.
   */
  async add(record: AdminAuditRecord): Promise<void> {
    const details = record.details === null ? null : JSON.stringify(record.details);
    await this.prisma.$executeRaw`
      INSERT INTO admin_audit (id, at, org_id, actor_id, action, target_type, target_id, request_id, details)
      VALUES (${record.id}::uuid, ${record.at}, ${record.orgId}, ${record.actorId}, ${record.action},
        ${record.targetType}, ${record.targetId}, ${record.requestId}, ${details}::jsonb)
      ON CONFLICT DO NOTHING`;
  }

  /** An org's entries, newest first, after `position` when given; `limit` rows at most. */
  async listForOrg(orgId: string, position: AuditPosition | undefined, limit: number): Promise<AdminAuditRecord[]> {
    const rows = await this.prisma.adminAuditEntry.findMany({
      where: { orgId, ...olderThan(position) },
      orderBy: [{ at: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return rows.map((row) => ({ ...row, details: detailsOf(row.details) }));
  }
}
