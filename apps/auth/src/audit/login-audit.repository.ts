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
  /** Concurrent token requests' rows go in one INSERT; each request waits for its own batch's. */
  private readonly writes = new GroupCommit<LoginAuditRecord>(async (records) => {
    await this.prisma.loginAuditEntry.createMany({ data: records.map((record) => ({ id: randomUUID(), ...record })) });
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
