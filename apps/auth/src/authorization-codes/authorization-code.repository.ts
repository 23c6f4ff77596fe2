import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

/** An authorization code as stored (no Prisma type leaves this file); the code itself only as a hash. */
export interface StoredAuthorizationCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  userId: string;
  orgId: string;
  scopes: string[];
  roles: string[];
  expiresAt: Date;
}

export type NewAuthorizationCode = StoredAuthorizationCode & { codeHash: string; createdAt: Date };

/** A code as claimed: also when it was issued. */
export type ClaimedAuthorizationCode = StoredAuthorizationCode & { createdAt: Date };

/** What an exchange will issue, chosen when the code is claimed so that a replay can revoke it. */
export interface Issuance {
  familyId: string;
  accessTokenJti: string;
}

/** `authorization_codes`. */
@Injectable()
export class AuthorizationCodeRepository {
  constructor(private readonly prisma: PrismaService) {}

  async insert(code: NewAuthorizationCode): Promise<void> {
    const { scopes, ...rest } = code;
    await this.prisma.authorizationCode.create({ data: { ...rest, scope: scopes.join(' ') } });
  }

  /**
   * Marks the code used (one conditional UPDATE, so of concurrent exchanges exactly one wins) and
   * records what it will issue; the code, or undefined when it is unknown or was used before.
   */
  async claim(codeHash: string, at: Date, issuance: Issuance): Promise<ClaimedAuthorizationCode | undefined> {
    const { count } = await this.prisma.authorizationCode.updateMany({
      where: { codeHash, usedAt: null },
      data: { usedAt: at, ...issuance },
    });
    if (count !== 1) return undefined;
    const row = await this.prisma.authorizationCode.findUnique({ where: { codeHash } });
    if (!row) return undefined;
    return {
      clientId: row.clientId,
      redirectUri: row.redirectUri,
      codeChallenge: row.codeChallenge,
      userId: row.userId,
      orgId: row.orgId,
      scopes: row.scope.split(' ').filter(Boolean),
      roles: row.roles,
      expiresAt: row.expiresAt,
      createdAt: row.createdAt,
    };
  }

  /** Marks a used code as replayed; what its exchange issued, or undefined for an unknown or unused code. */
  async markReplayed(codeHash: string, at: Date): Promise<Issuance | undefined> {
    const { count } = await this.prisma.authorizationCode.updateMany({
      where: { codeHash, usedAt: { not: null } },
      data: { replayedAt: at },
    });
    if (count !== 1) return undefined;
    const row = await this.prisma.authorizationCode.findUnique({
      where: { codeHash },
      select: { familyId: true, accessTokenJti: true },
    });
    return row?.familyId && row.accessTokenJti
      ? { familyId: row.familyId, accessTokenJti: row.accessTokenJti }
      : undefined;
  }

  async wasReplayed(codeHash: string): Promise<boolean> {
    const row = await this.prisma.authorizationCode.findUnique({ where: { codeHash }, select: { replayedAt: true } });
    return row?.replayedAt !== null && row?.replayedAt !== undefined;
  }

  /** Deletes codes that expired before `before`; how many. */
  async purgeExpired(before: Date): Promise<number> {
    const { count } = await this.prisma.authorizationCode.deleteMany({ where: { expiresAt: { lt: before } } });
    return count;
  }
}
