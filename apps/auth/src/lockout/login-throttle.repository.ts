import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { ADMIT, GIVE_BACK, RECORD_SUCCESS } from './login-throttle.statements';

/** A (username, IP) pair's slot after an attempt took it. */
export interface PairSlot {
  /** Every attempt of the window, the refused ones included. */
  attempts: number;
  lockedUntil: Date | null;
  /** The oldest attempt the pair counts (while locked, the oldest of those that earned the lock). */
  windowStartedAt: Date;
}

/** A pair's row as the statements answer it (TAKE_PAIR_SLOT, ADMIT). */
export interface PairRow {
  attempts: number;
  locked_until: Date | null;
  window_started_at: Date;
}

export const pairSlotOf = (row: PairRow): PairSlot => ({
  attempts: row.attempts,
  lockedUntil: row.locked_until,
  windowStartedAt: row.window_started_at,
});

/**
 * Where an attempt's slots were taken: a slot goes back only where it was counted, never to a count
 * started since (which would allow a failure more there).
 */
export interface TakenSlots {
  /** When the attempt took the pair's slot (its time among the pair's attempts). */
  pair: Date;
  /** Undefined when the attempt took no slot of the budget (the source is exempt). */
  budget?: Date;
}

/** An account's hourly budget after an attempt took a slot of it. */
export interface AccountBudget {
  failures: number;
  /** Attempts refused in this window (once one is, every later one is too). */
  refused: number;
  windowStartedAt: Date;
}

/** A pair's rules: `maxFailures` attempts in `windowSeconds` lock it for `lockSeconds`. */
export interface PairWindow {
  maxFailures: number;
  windowSeconds: number;
  lockSeconds: number;
}

export interface LoginRules {
  pair: PairWindow;
  account: { maxFailures: number; windowSeconds: number };
}

/** What the statement before the password check found and took. */
export interface Admission {
  pair: PairSlot;
  /** The budget's slot; undefined when none was taken (the pair is locked, or the source is exempt). */
  budget?: AccountBudget;
}

interface AdmitRow extends PairRow {
  exempt: boolean;
  failures: number | null;
  refused: number | null;
  budget_window_started_at: Date | null;
}

/**
 * The login's three throttle tables, `login_throttles` (one row per (username, client key) with recent
 * attempts), `login_account_throttles` (one budget per username) and `known_login_sources` (the IPs an
 * account logged in from, exempt from its budget), in the statements of login-throttle.statements.ts.
 */
@Injectable()
export class LoginThrottleRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Before the password check, one round trip: takes the pair's slot and, unless the pair is locked or
   * the source is exempt (`deviceExempt`, or a known source: its client key logged in after
   * `knownSince`), a slot of the account's budget.
   */
  async admit(
    username: string,
    clientKey: string,
    now: Date,
    exemption: { deviceExempt: boolean; knownSince: Date },
    rules: LoginRules,
  ): Promise<Admission> {
    const [row] = await this.prisma.direct.query<AdmitRow>(ADMIT, [
      username,
      clientKey,
      now,
      rules.pair.windowSeconds,
      rules.pair.maxFailures,
      rules.pair.lockSeconds,
      exemption.deviceExempt,
      exemption.knownSince,
      rules.account.maxFailures,
      rules.account.windowSeconds,
    ]);
    const pair = pairSlotOf(row);
    if (row.failures === null || row.refused === null || row.budget_window_started_at === null) return { pair };
    return {
      pair,
      budget: { failures: row.failures, refused: row.refused, windowStartedAt: row.budget_window_started_at },
    };
  }

  /**
   * After a successful login, one round trip: frees the pair, remembers the client key as a known source
   * (at `now`; one last seen at or before `expiredAt` starts anew, and the account's others that no
   * longer count are forgotten), and gives back the budget's slot when the attempt took one (`slotWindow`:
   * the start of the window it was taken in; it goes back to that window only).
   */
  async recordSuccess(username: string, clientKey: string, now: Date, expiredAt: Date, slotWindow: Date | undefined) {
    await this.prisma.direct.query(RECORD_SUCCESS, [username, clientKey, now, expiredAt, slotWindow ?? null]);
  }

  /**
   * After an attempt whose password was never checked, one round trip: gives back the pair's slot and,
   * when the attempt took one, the budget's (GIVE_BACK), each only where it was counted (`slots`).
   */
  async giveBack(username: string, clientKey: string, slots: TakenSlots, rules: PairWindow) {
    await this.prisma.direct.query(GIVE_BACK, [
      username,
      clientKey,
      slots.budget ?? null,
      rules.maxFailures,
      slots.pair,
    ]);
  }

  /**
   * Deletes up to `batch` pairs and up to `batch` budgets that an attempt at `now` would start anew
   * (no lock holds, and a lock ended or none of the pair's attempts is within its window; the budget's
   * window is over: as TAKE_PAIR_SLOT and ADMIT judge them, so a row gone counts as the row would have);
   * answers how many. Without it every username and IP ever tried kept its rows.
   */
  async pruneThrottles(now: Date, rules: LoginRules, batch: number): Promise<number> {
    const pairs = await this.prisma.$executeRaw`
      DELETE FROM login_throttles WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM login_throttles
        WHERE NOT (locked_until IS NOT NULL AND locked_until > ${now})
          AND (locked_until IS NOT NULL
            OR (window_started_at <= ${now}::timestamptz - make_interval(secs => ${rules.pair.windowSeconds}::float8)
              AND NOT EXISTS (SELECT 1 FROM unnest(attempt_times) AS at
                WHERE at > ${now}::timestamptz - make_interval(secs => ${rules.pair.windowSeconds}::float8))))
        LIMIT ${batch}))`;
    const budgets = await this.prisma.$executeRaw`
      DELETE FROM login_account_throttles WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM login_account_throttles
        WHERE window_started_at <= ${now}::timestamptz - make_interval(secs => ${rules.account.windowSeconds}::float8)
        LIMIT ${batch}))`;
    return pairs + budgets;
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
