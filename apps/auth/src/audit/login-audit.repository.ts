import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { AuditPosition, olderThan } from './audit-cursor';
import { GroupCommit } from './group-commit';

/** One token request to record. */
export interface LoginAuditRecord {
  at: Date;
  grantType: string;
  username: string;
  subject: string | null;
  orgId: string | null;
  clientId: string;
  clientIp: string;
  deviceId: string;
  userAgent: string;
  outcome: string;
  reason: string;
}

/** One recorded token request. */
export type LoginAuditRow = LoginAuditRecord & { id: string };

/** The `login_audit` table. */
@Injectable()
export class LoginAuditRepository {
  /**
   * Concurrent token requests' rows go in one INSERT; each request waits for its own batch's. The
   * INSERT takes one array per column (`unnest`), so it is the same statement whatever the batch's size:
   * Prisma's createMany was a new query shape, compiled again, for every size.
   */
  private readonly writes = new GroupCommit<LoginAuditRecord>(async (records) => {
    const column = <T>(value: (record: LoginAuditRecord) => T) => records.map(value);
    await this.prisma.$executeRaw`
      INSERT INTO login_audit (id, at, grant_type, username, subject, org_id, client_id, client_ip, device_id,
                               user_agent, outcome, reason)
      SELECT * FROM unnest(
        ${column(() => randomUUID())}::uuid[], ${column((record) => record.at.toISOString())}::timestamptz[],
        ${column((record) => record.grantType)}::text[], ${column((record) => record.username)}::text[],
        ${column((record) => record.subject)}::text[], ${column((record) => record.orgId)}::text[],
        ${column((record) => record.clientId)}::text[], ${column((record) => record.clientIp)}::text[],
        ${column((record) => record.deviceId)}::text[], ${column((record) => record.userAgent)}::text[],
        ${column((record) => record.outcome)}::text[], ${column((record) => record.reason)}::text[])`;
  });

  constructor(private readonly prisma: PrismaService) {}

  /** Resolves once the row is stored (with the rows of concurrent requests), rejects if it was not. */
  add(record: LoginAuditRecord): Promise<void> {
    return this.writes.add(record);
  }

  /**
   * An org's entries, newest first, after `position` when given (keyset), of one subject and one
   * outcome when given; `limit` rows at most.
   */
  listForOrg(
    orgId: string,
    filter: { subject?: string; outcome?: string },
    position: AuditPosition | undefined,
    limit: number,
  ): Promise<LoginAuditRow[]> {
    return this.prisma.loginAuditEntry.findMany({
      where: {
        orgId,
        ...(filter.subject ? { subject: filter.subject } : {}),
        ...(filter.outcome ? { outcome: filter.outcome } : {}),
        ...olderThan(position),
      },
      orderBy: [{ at: 'desc' }, { id: 'desc' }],
      take: limit,
    });
  }
}
