import { createHash, randomBytes, randomUUID } from 'node:crypto';

import { PASSWORD_SET_TOKEN_LIFETIME_MS } from '@acct/events';
import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface IssuedToken {
  token: string;
  expiresAt: Date;
}

/** A stored token, found by its hash. */
export interface StoredPasswordSetToken {
  id: string;
  userId: string;
  expiresAt: Date;
  usedAt: Date | null;
}

/**
 * One-time password:set tokens (activation and reset). The token is 256 random bits; only its SHA-256
 * is stored (a fast hash is right for a high-entropy secret, and lookups stay constant-time by index).
 */
@Injectable()
export class PasswordSetTokensRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Takes the user's issuing lock for the rest of the transaction: concurrent resets of one user run
   * one after the other, so each retires the link the one before it issued and exactly the last one
   * stays working. A reset then locks the user's row, as setting a password and a deletion do first
   * (user row, then its tokens): the order is the same everywhere, so none waits in a circle.
   */
  async lockIssuing(db: Db, userId: string): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`password-set-tokens:${userId}`}))`;
  }

  async issue(db: Db, userId: string, now: Date): Promise<IssuedToken> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + PASSWORD_SET_TOKEN_LIFETIME_MS);
    await db.passwordSetToken.create({
      data: { id: randomUUID(), userId, tokenHash: hashToken(token), expiresAt, createdAt: now },
    });
    return { token, expiresAt };
  }

  async findByToken(token: string, db: Db = this.prisma): Promise<StoredPasswordSetToken | undefined> {
    const found = await db.passwordSetToken.findUnique({ where: { tokenHash: hashToken(token) } });
    return found ? { id: found.id, userId: found.userId, expiresAt: found.expiresAt, usedAt: found.usedAt } : undefined;
  }

  /** Uses the token up, once: false when it was used or expired meanwhile (a concurrent use won). */
  async consume(db: Db, id: string, now: Date): Promise<boolean> {
    const consumed = await db.passwordSetToken.updateMany({
      where: { id, usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    return consumed.count === 1;
  }

  /**
   * Uses up every other token the user still holds: once a password is set, an older activation or
   * reset link (a mail lying in an inbox) must not set it again.
   */
  async retireAllOf(db: Db, userId: string, now: Date): Promise<void> {
    await db.passwordSetToken.updateMany({ where: { userId, usedAt: null }, data: { usedAt: now } });
  }

  /**
   * Deletes up to `batch` tokens expired at `now` (refused from then on, as checkToken and consume
   * judge them), by the index on `expires_at`; answers how many.
   */
  async pruneExpired(now: Date, batch: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM password_set_tokens WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM password_set_tokens WHERE expires_at <= ${now} LIMIT ${batch}))`;
  }
}
