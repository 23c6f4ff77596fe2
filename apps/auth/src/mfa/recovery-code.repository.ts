import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

/** The `mfa_recovery_codes` table: a user's current set of recovery codes, by hash. */
@Injectable()
export class RecoveryCodeRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Replaces the user's set with `hashes`, in one transaction, only while its factor is confirmed
   * (a concurrent removal of MFA leaves no set behind); false when it is not.
   */
  async replaceSet(userId: string, hashes: readonly string[], now: Date): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      // Locks the factor's row: a removal of MFA waits for this set, or this set for the removal.
      const [factor] = await tx.$queryRaw<Array<{ user_id: string }>>`
        SELECT user_id FROM mfa_totp WHERE user_id = ${userId}::uuid AND confirmed_at IS NOT NULL FOR UPDATE`;
      if (!factor) return false;
      await tx.mfaRecoveryCode.deleteMany({ where: { userId } });
      await tx.mfaRecoveryCode.createMany({ data: hashes.map((codeHash) => ({ userId, codeHash, createdAt: now })) });
      return true;
    });
  }

  /**
   * Uses the code with this hash, once: one conditional UPDATE (`used_at IS NULL`), so of two
   * concurrent logins with the same code exactly one gets true.
   */
  async use(userId: string, codeHash: string, now: Date): Promise<boolean> {
    const written = await this.prisma.$executeRaw`
      UPDATE mfa_recovery_codes SET used_at = ${now}
      WHERE user_id = ${userId}::uuid AND code_hash = ${codeHash} AND used_at IS NULL`;
    return written === 1;
  }
}
