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

/** A batch of rows, one array per column. */
const INSERT_BATCH = `
  INSERT INTO login_audit (id, at, grant_type, username, subject, org_id, client_id, client_ip, device_id,
                           user_agent, outcome, reason)
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                       $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])`;

/** One recorded token request. */
export type LoginAuditRow = LoginAuditRecord & { id: string };

/** The `login_audit` table. */
@Injectable()
export class LoginAuditRepository {
  /**
   * Concurrent token requests' rows go in one INSERT; each request waits for its own batch's. The
   * INSERT takes one array per column (`unnest`), so it is the same prepared statement whatever the
   * batch's size, sent without Prisma's runtime (one per batch, on every token request's path).
   */
  private readonly writes = new GroupCommit<LoginAuditRecord>(async (records) => {
    const column = <T>(value: (record: LoginAuditRecord) => T) => records.map(value);
    await this.prisma.direct.query(INSERT_BATCH, [
      column(() => randomUUID()),
      column((record) => record.at.toISOString()),
      column((record) => record.grantType),
      column((record) => record.username),
      column((record) => record.subject),
      column((record) => record.orgId),
      column((record) => record.clientId),
      column((record) => record.clientIp),
      column((record) => record.deviceId),
      column((record) => record.userAgent),
      column((record) => record.outcome),
      column((record) => record.reason),
    ]);
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
