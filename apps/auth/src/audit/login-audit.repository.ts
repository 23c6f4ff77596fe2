import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

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
  constructor(private readonly prisma: PrismaService) {}

  async add(record: LoginAuditRecord): Promise<void> {
    await this.prisma.loginAuditEntry.create({ data: { id: randomUUID(), ...record } });
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
