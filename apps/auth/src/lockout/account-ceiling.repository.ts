import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
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
   * After a successful login, in one statement (one round trip, one transaction): records its source
   * (or refreshes its `last_seen_at`; a source last seen at or before `expiredAt` starts anew), forgets
   * the account's other sources that no longer count (last seen at or before `expiredAt`, or of another
   * kind than `ip`), and, when the attempt took a slot of the budget, gives it back while nothing of the
   * window was refused.
   */
  async recordSuccess(
    username: string,
    source: { kind: SourceKind; value: string; now: Date; expiredAt: Date } | undefined,
    tookSlot: boolean,
  ): Promise<void> {
    if (!source) {
      if (tookSlot) await this.prisma.$executeRaw`WITH ${givenBack(username)} SELECT 1`;
      return;
    }
    const { kind, value, now, expiredAt } = source;
    // The sub-statements see one snapshot, so none may touch a row another changes: the pruning
    // leaves the recorded source to the upsert.
    await this.prisma.$executeRaw`
      WITH pruned AS (
        DELETE FROM known_login_sources
        WHERE username = ${username} AND (kind <> 'ip' OR last_seen_at <= ${expiredAt})
          AND NOT (kind = ${kind} AND value = ${value})
      ), remembered AS (
        INSERT INTO known_login_sources (username, kind, value, first_seen_at, last_seen_at)
        VALUES (${username}, ${kind}, ${value}, ${now}, ${now})
        ON CONFLICT (username, kind, value) DO UPDATE SET
          last_seen_at = EXCLUDED.last_seen_at,
          first_seen_at = CASE WHEN known_login_sources.last_seen_at <= ${expiredAt}
            THEN EXCLUDED.first_seen_at ELSE known_login_sources.first_seen_at END
      )${tookSlot ? Prisma.sql`, ${givenBack(username)}` : Prisma.empty}
      SELECT 1`;
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

/** The CTE that gives one slot of the username's budget back, only while nothing of the window was refused. */
const givenBack = (username: string) => Prisma.sql`
  given_back AS (
    UPDATE login_account_throttles SET failures = failures - 1
    WHERE username = ${username} AND refused = 0 AND failures > 0
  )`;
