import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { withAuditReason } from '../audit/audit-reason';
import { AuthMetrics } from '../metrics/auth-metrics';
import { PrismaService } from '../prisma/prisma.service';
import { LoginAttempt, LoginPolicy } from '../tokens/login-policy';

/** OWASP ASVS 2.2.1: at most 100 failed attempts an hour on one account, across all IPs. */
export const ACCOUNT_MAX_FAILURES = 100;
export const ACCOUNT_WINDOW_SECONDS = 60 * 60;

interface Budget {
  failures: number;
  refused: number;
  window_started_at: Date;
}

/**
 * The account-wide ceiling. Every attempt on a username (known or not) from a source that is not
 * exempt takes a slot of that username's hourly budget with one atomic upsert, before its password is
 * checked, so concurrent attempts queue on the row and never take more than 100 slots. Once the budget
 * is spent, attempts from such sources get 429 `login_locked` until the hour since the window's first
 * attempt is over. Exempt, so the ceiling cannot lock the owner out: an IP or a device (`X-Device-Id`)
 * that has logged in successfully to the account before (recorded on every success). Only failures
 * count: a success from a new source gives its slot back while the budget is not spent (once spent,
 * the lock stands for the rest of the hour). A success does not reset the budget either (the owner's
 * devices do not need it, and a reset would hand an attacker a fresh 100 every time the owner logs in).
 */
@Injectable()
export class AccountCeilingPolicy implements LoginPolicy {
  constructor(
    private readonly prisma: PrismaService,
    private readonly clock: Clock,
    private readonly metrics: AuthMetrics,
  ) {}

  async beforePasswordCheck(attempt: LoginAttempt): Promise<void> {
    if (await this.isKnownSource(attempt)) return;
    const now = new Date(this.clock.now());
    const [budget] = await this.prisma.$queryRaw<Budget[]>`
      INSERT INTO login_account_throttles (username, failures, window_started_at, refused)
      VALUES (${attempt.username}, 1, ${now}, 0)
      ON CONFLICT (username) DO UPDATE SET
        failures = CASE
          WHEN login_account_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${ACCOUNT_WINDOW_SECONDS}) THEN 1
          WHEN login_account_throttles.failures < ${ACCOUNT_MAX_FAILURES} THEN login_account_throttles.failures + 1
          ELSE login_account_throttles.failures END,
        refused = CASE
          WHEN login_account_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${ACCOUNT_WINDOW_SECONDS}) THEN 0
          WHEN login_account_throttles.failures < ${ACCOUNT_MAX_FAILURES} THEN login_account_throttles.refused
          ELSE login_account_throttles.refused + 1 END,
        window_started_at = CASE
          WHEN login_account_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${ACCOUNT_WINDOW_SECONDS}) THEN ${now}
          ELSE login_account_throttles.window_started_at END
      RETURNING failures, refused, window_started_at`;
    // Slots are given back (by successes) only while nothing was refused, so once an attempt is
    // refused every later one is too, until the window ends: `refused` > 0 means this one was.
    if (!budget || budget.refused === 0) return;
    if (budget.refused === 1) this.metrics.lockStarted('account');
    const endsAt = budget.window_started_at.getTime() + ACCOUNT_WINDOW_SECONDS * 1000;
    const retryAfter = Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000));
    throw withAuditReason(
      new DomainError('login_locked', 'Too many failed logins; this login is locked for a while.', {
        retryAfter,
        extensions: { error: 'login_locked', error_description: 'Too many failed logins.' },
      }),
      'login_locked_account',
    );
  }

  /** The failed attempt already holds its slot. */
  async afterFailure(): Promise<void> {}

  /**
   * Gives back the slot a new source took (only failures count, ASVS 2.2.1) and remembers its IP and
   * device as the account's own: exempt from now on.
   */
  async afterSuccess(attempt: LoginAttempt): Promise<void> {
    const now = new Date(this.clock.now());
    // A source none of whose parts was known yet took a slot before its password check.
    let tookSlot = true;
    for (const [kind, value] of sourcesOf(attempt)) {
      const [row] = await this.prisma.$queryRaw<Array<{ inserted: boolean }>>`
        INSERT INTO known_login_sources (username, kind, value, first_seen_at, last_seen_at)
        VALUES (${attempt.username}, ${kind}, ${value}, ${now}, ${now})
        ON CONFLICT (username, kind, value) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at
        RETURNING (xmax = 0) AS inserted`;
      if (!row?.inserted) tookSlot = false;
    }
    if (tookSlot) {
      await this.prisma.$executeRaw`
        UPDATE login_account_throttles SET failures = failures - 1
        WHERE username = ${attempt.username} AND refused = 0 AND failures > 0`;
    }
  }

  private async isKnownSource(attempt: LoginAttempt): Promise<boolean> {
    const sources = sourcesOf(attempt);
    if (sources.length === 0) return false;
    const known = await this.prisma.knownLoginSource.findFirst({
      where: { username: attempt.username, OR: sources.map(([kind, value]) => ({ kind, value })) },
      select: { kind: true },
    });
    return known !== null;
  }
}

/** The attempt's IP and device id, when it has them. */
function sourcesOf(attempt: LoginAttempt): Array<['ip' | 'device', string]> {
  const sources: Array<['ip' | 'device', string]> = [];
  if (attempt.clientIp) sources.push(['ip', attempt.clientIp]);
  if (attempt.deviceId) sources.push(['device', attempt.deviceId]);
  return sources;
}
