import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

/** An account's hourly budget after an attempt took a slot of it. */
export interface AccountBudget {
  failures: number;
  /** Attempts refused in this window (once one is, every later one is too). */
  refused: number;
  windowStartedAt: Date;
}

/** Only IPs now: rows of kind `device` (raw `X-Device-Id` values, before device credentials) are ignored. */
export type SourceKind = 'ip';

/** `login_account_throttles` (one budget per username) and `known_login_sources` (exempt sources). */
@Injectable()
export class AccountCeilingRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Takes one slot of the username's budget with one atomic upsert (concurrent attempts queue on the
   * row, so never more than `maxFailures` are taken): a new window once the last one is
   * `windowSeconds` old; past `maxFailures`, the attempt is counted as refused instead.
   */
  async takeSlot(
    username: string,
    now: Date,
    rules: { maxFailures: number; windowSeconds: number },
  ): Promise<AccountBudget | undefined> {
    const { maxFailures, windowSeconds } = rules;
    const [budget] = await this.prisma.$queryRaw<Array<{ failures: number; refused: number; window_started_at: Date }>>`
      INSERT INTO login_account_throttles (username, failures, window_started_at, refused)
      VALUES (${username}, 1, ${now}, 0)
      ON CONFLICT (username) DO UPDATE SET
        failures = CASE
          WHEN login_account_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${windowSeconds}) THEN 1
          WHEN login_account_throttles.failures < ${maxFailures} THEN login_account_throttles.failures + 1
          ELSE login_account_throttles.failures END,
        refused = CASE
          WHEN login_account_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${windowSeconds}) THEN 0
          WHEN login_account_throttles.failures < ${maxFailures} THEN login_account_throttles.refused
          ELSE login_account_throttles.refused + 1 END,
        window_started_at = CASE
          WHEN login_account_throttles.window_started_at <= ${now}::timestamptz - make_interval(secs => ${windowSeconds}) THEN ${now}
          ELSE login_account_throttles.window_started_at END
      RETURNING failures, refused, window_started_at`;
    return budget
      ? { failures: budget.failures, refused: budget.refused, windowStartedAt: budget.window_started_at }
      : undefined;
  }

  /** Gives one slot back, only while nothing of the window was refused. */
  async giveBackSlot(username: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE login_account_throttles SET failures = failures - 1
      WHERE username = ${username} AND refused = 0 AND failures > 0`;
  }

  /** Whether any of `sources` has logged in to the account successfully after `since`. */
  async isKnownSource(username: string, sources: ReadonlyArray<[SourceKind, string]>, since: Date): Promise<boolean> {
    if (sources.length === 0) return false;
    const known = await this.prisma.knownLoginSource.findFirst({
      where: { username, lastSeenAt: { gt: since }, OR: sources.map(([kind, value]) => ({ kind, value })) },
      select: { kind: true },
    });
    return known !== null;
  }

  /**
   * Records a source of a successful login (or refreshes its `last_seen_at`), and forgets the
   * account's sources that no longer count: last seen at or before `expiredAt`, or of another kind
   * than `ip`. True when the source was not known (or no longer counted) before.
   */
  async rememberSource(
    username: string,
    kind: SourceKind,
    value: string,
    now: Date,
    expiredAt: Date,
  ): Promise<boolean> {
    // Expired rows go first, so an expired source that returns is recorded as new.
    const [, [row]] = await this.prisma.$transaction([
      this.prisma.$executeRaw`
        DELETE FROM known_login_sources
        WHERE username = ${username} AND (kind <> 'ip' OR last_seen_at <= ${expiredAt})`,
      this.prisma.$queryRaw<Array<{ inserted: boolean }>>`
        INSERT INTO known_login_sources (username, kind, value, first_seen_at, last_seen_at)
        VALUES (${username}, ${kind}, ${value}, ${now}, ${now})
        ON CONFLICT (username, kind, value) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at
        RETURNING (xmax = 0) AS inserted`,
    ]);
    return row?.inserted === true;
  }

  /**
   * Deletes up to `batch` sources of any account last seen at or before `expiredAt` (the index on
   * `last_seen_at`); answers how many. Rows of kind `device` are no longer written, so they all fall
   * under this within the expiry, and each account's go at its next successful login.
   */
  async pruneSources(expiredAt: Date, batch: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM known_login_sources WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM known_login_sources WHERE last_seen_at <= ${expiredAt} LIMIT ${batch}))`;
  }
}
