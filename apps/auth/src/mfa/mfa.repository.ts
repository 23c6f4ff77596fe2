import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

/** A user's TOTP factor as stored: the secret still encrypted. */
export interface StoredTotp {
  userId: string;
  encryptedSecret: string;
  confirmedAt: Date | null;
}

const FIND_FACTOR = `
  SELECT user_id AS "userId", secret AS "encryptedSecret", confirmed_at AS "confirmedAt"
  FROM mfa_totp WHERE user_id = $1::uuid`;

/** The `mfa_totp` table: one TOTP factor per user. */
@Injectable()
export class MfaRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Every password login asks (contract §4), so it is sent without Prisma's runtime, as a prepared statement. */
  async find(userId: string): Promise<StoredTotp | undefined> {
    const [row] = await this.prisma.direct.query<StoredTotp>(FIND_FACTOR, [userId]);
    return row;
  }

  /**
   * Stores a new, unconfirmed secret, replacing an unconfirmed one; false (nothing changed) when the
   * user's MFA is already confirmed. One statement, so it cannot race a confirmation.
   */
  async savePending(userId: string, encryptedSecret: string, now: Date): Promise<boolean> {
    const written = await this.prisma.$executeRaw`
      INSERT INTO mfa_totp (user_id, secret, confirmed_at, last_used_step, created_at)
      VALUES (${userId}::uuid, ${encryptedSecret}, NULL, NULL, ${now})
      ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = EXCLUDED.created_at, last_used_step = NULL
      WHERE mfa_totp.confirmed_at IS NULL`;
    return written === 1;
  }

  /**
   * Confirms the pending factor whose secret is still `encryptedSecret` (not replaced meanwhile), and
   * consumes the confirming code's step so it cannot also be used to log in. False when nothing matched.
   */
  async confirm(userId: string, encryptedSecret: string, step: number, now: Date): Promise<boolean> {
    const written = await this.prisma.$executeRaw`
      UPDATE mfa_totp SET confirmed_at = ${now}, last_used_step = ${step}
      WHERE user_id = ${userId}::uuid AND secret = ${encryptedSecret} AND confirmed_at IS NULL`;
    return written === 1;
  }

  /**
   * Takes the time step of an accepted login code, once: one conditional UPDATE, so of two concurrent
   * logins with the same code (or an older one) exactly one succeeds.
   */
  async consumeStep(userId: string, step: number): Promise<boolean> {
    const written = await this.prisma.$executeRaw`
      UPDATE mfa_totp SET last_used_step = ${step}
      WHERE user_id = ${userId}::uuid AND confirmed_at IS NOT NULL
        AND (last_used_step IS NULL OR last_used_step < ${step})`;
    return written === 1;
  }

  /**
   * Removes the user's factor only while it is unconfirmed (and any recovery codes); false, removing
   * nothing, when a confirmed factor is there. For a removal that read the factor as pending and so
   * asked for no code: a confirmation committed since (while the password was checked) must not be
   * undone without one. The DELETE waits for a confirmation in progress and then skips its row (READ
   * COMMITTED checks `confirmed_at` again on the row as committed).
   */
  async removeUnconfirmedFactor(userId: string): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`DELETE FROM mfa_totp WHERE user_id = ${userId}::uuid AND confirmed_at IS NULL`;
      // Held until the end: a confirmed factor found here stays; none found, none can be confirmed now.
      const confirmed = await tx.$queryRaw<Array<{ user_id: string }>>`
        SELECT user_id FROM mfa_totp WHERE user_id = ${userId}::uuid AND confirmed_at IS NOT NULL FOR UPDATE`;
      if (confirmed.length > 0) return false;
      await tx.mfaRecoveryCode.deleteMany({ where: { userId } });
      return true;
    });
  }

  /**
   * Removes the user's factor (confirmed or pending) and its recovery codes, in one transaction; false
   * when there was neither.
   */
  async removeFactor(userId: string): Promise<boolean> {
    const [factor, codes] = await this.prisma.$transaction([
      this.prisma.mfaTotp.deleteMany({ where: { userId } }),
      this.prisma.mfaRecoveryCode.deleteMany({ where: { userId } }),
    ]);
    return factor.count + codes.count > 0;
  }
}
