import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { GroupCommit } from './group-commit';

/** One recorded token request. */
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

  /** An org's entries, newest first, older than `before` when given. */
  async listForOrg(orgId: string, before: Date | undefined, limit: number): Promise<LoginAuditRecord[]> {
    const rows = await this.prisma.loginAuditEntry.findMany({
      where: { orgId, ...(before ? { at: { lt: before } } : {}) },
      orderBy: { at: 'desc' },
      take: limit,
    });
    return rows.map(({ id: _id, ...record }) => record);
  }
}
