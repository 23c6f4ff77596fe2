import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

/** A (username, IP) pair's slot after an attempt took it. */
export interface PairSlot {
  /** Every attempt of the window, the refused ones included. */
  attempts: number;
  lockedUntil: Date | null;
}

export interface PairWindow {
  maxFailures: number;
  windowSeconds: number;
  lockSeconds: number;
}

/** The `login_throttles` table: one row per (username, client IP) with recent attempts. */
@Injectable()
export class LockoutRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Counts one attempt of the pair with one atomic upsert (concurrent attempts queue on the row):
   * a new window after the last one ran out or a lock ended, the lock once the count passes
   * `maxFailures`, and more attempts counted while locked.
   */
  async takeSlot(username: string, clientIp: string, now: Date, rules: PairWindow): Promise<PairSlot | undefined> {
    const { maxFailures, windowSeconds, lockSeconds } = rules;
    const [slot] = await this.prisma.$queryRaw<Array<{ attempts: number; locked_until: Date | null }>>`
      INSERT INTO login_throttles (username, client_ip, attempts, window_started_at, locked_until)
      VALUES (${username}, ${clientIp}, 1, ${now}, NULL)
      ON CONFLICT (username, client_ip) DO UPDATE SET
        attempts = CASE
          WHEN login_throttles.locked_until > ${now} THEN login_throttles.attempts + 1
          WHEN login_throttles.locked_until IS NOT NULL
            OR login_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${windowSeconds}) THEN 1
          ELSE login_throttles.attempts + 1 END,
        window_started_at = CASE
          WHEN login_throttles.locked_until > ${now} THEN login_throttles.window_started_at
          WHEN login_throttles.locked_until IS NOT NULL
            OR login_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${windowSeconds}) THEN ${now}
          ELSE login_throttles.window_started_at END,
        locked_until = CASE
          WHEN login_throttles.locked_until > ${now} THEN login_throttles.locked_until
          WHEN login_throttles.locked_until IS NOT NULL
            OR login_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${windowSeconds}) THEN NULL
          WHEN login_throttles.attempts + 1 > ${maxFailures} THEN ${now}::timestamptz + make_interval(secs => ${lockSeconds})
          ELSE NULL END
      RETURNING attempts, locked_until`;
    return slot ? { attempts: slot.attempts, lockedUntil: slot.locked_until } : undefined;
  }

  /** Forgets the pair's attempts (after a successful login). */
  async clear(username: string, clientIp: string): Promise<void> {
    await this.prisma.loginThrottle.deleteMany({ where: { username, clientIp } });
  }
}
