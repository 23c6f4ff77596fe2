import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { AuthMetrics } from '../metrics/auth-metrics';
import { PrismaService } from '../prisma/prisma.service';
import { LoginAttempt, LoginPolicy } from '../tokens/login-policy';

/** Contract §4: 5 failed attempts of one (username, IP) within 15 minutes lock that pair for 15 minutes. */
export const MAX_FAILURES = 5;
export const WINDOW_SECONDS = 15 * 60;
export const LOCK_SECONDS = 15 * 60;

interface Slot {
  /** Every attempt of the window, the refused ones included. */
  attempts: number;
  locked_until: Date | null;
}

/**
 * Lockout per (normalised username, client IP), kept in the auth database. Every attempt first takes
 * a slot with one atomic upsert (concurrent attempts on one pair queue on its row), so however many
 * arrive at once, at most five passwords are ever checked before the pair locks; the sixth attempt,
 * and every attempt while locked, is refused with 429 `login_locked` without a password check, correct
 * password or not. A success frees the pair. Unknown usernames are counted the same way, so the lock
 * reveals nothing about which accounts exist; other IPs are unaffected.
 */
@Injectable()
export class LockoutPolicy implements LoginPolicy {
  constructor(
    private readonly prisma: PrismaService,
    private readonly clock: Clock,
    private readonly metrics: AuthMetrics,
  ) {}

  async beforePasswordCheck(attempt: LoginAttempt): Promise<void> {
    const now = new Date(this.clock.now());
    const [slot] = await this.prisma.$queryRaw<Slot[]>`
      INSERT INTO login_throttles (username, client_ip, attempts, window_started_at, locked_until)
      VALUES (${attempt.username}, ${attempt.clientIp}, 1, ${now}, NULL)
      ON CONFLICT (username, client_ip) DO UPDATE SET
        attempts = CASE
          WHEN login_throttles.locked_until > ${now} THEN login_throttles.attempts + 1
          WHEN login_throttles.locked_until IS NOT NULL
            OR login_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${WINDOW_SECONDS}) THEN 1
          ELSE login_throttles.attempts + 1 END,
        window_started_at = CASE
          WHEN login_throttles.locked_until > ${now} THEN login_throttles.window_started_at
          WHEN login_throttles.locked_until IS NOT NULL
            OR login_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${WINDOW_SECONDS}) THEN ${now}
          ELSE login_throttles.window_started_at END,
        locked_until = CASE
          WHEN login_throttles.locked_until > ${now} THEN login_throttles.locked_until
          WHEN login_throttles.locked_until IS NOT NULL
            OR login_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${WINDOW_SECONDS}) THEN NULL
          WHEN login_throttles.attempts + 1 > ${MAX_FAILURES} THEN ${now}::timestamptz + make_interval(secs => ${LOCK_SECONDS})
          ELSE NULL END
      RETURNING attempts, locked_until`;
    if (slot?.locked_until && slot.locked_until.getTime() > now.getTime()) {
      // Attempts keep counting while locked, so only the attempt that started the lock sees MAX + 1.
      if (slot.attempts === MAX_FAILURES + 1) this.metrics.lockStarted('pair');
      const retryAfter = Math.max(1, Math.ceil((slot.locked_until.getTime() - now.getTime()) / 1000));
      throw new DomainError('login_locked', 'Too many failed logins; this login is locked for a while.', {
        retryAfter,
        extensions: { error: 'login_locked', error_description: 'Too many failed logins.' },
      });
    }
  }

  /** The failed attempt already holds its slot. */
  async afterFailure(): Promise<void> {}

  async afterSuccess(attempt: LoginAttempt): Promise<void> {
    await this.prisma.loginThrottle.deleteMany({ where: { username: attempt.username, clientIp: attempt.clientIp } });
  }
}
