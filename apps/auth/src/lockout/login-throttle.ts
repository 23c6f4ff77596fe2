import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { AuthMetrics } from '../metrics/auth-metrics';
import { DeviceCredentials } from './device-credentials';
import { LockoutPolicy, loginLocked, PAIR_RULES } from './lockout.policy';
import { LoginSource } from './login-source';
import { AccountBudget, LoginThrottleRepository, TakenSlots } from './login-throttle.repository';

/** OWASP ASVS 2.2.1: at most 100 failed attempts an hour on one account, across all IPs. */
export const ACCOUNT_MAX_FAILURES = 100;
export const ACCOUNT_WINDOW_SECONDS = 60 * 60;
/**
 * How long a known IP stays exempt after its last successful login (each success starts it again):
 * as long as a device credential lives, so neither exemption outlasts the other.
 */
export const KNOWN_SOURCE_TTL_MS = 90 * 24 * 60 * 60 * 1000;
/** A password login's two limits: the (username, IP) lockout's and the ceiling's. */
export const LOGIN_RULES = {
  pair: PAIR_RULES,
  account: { maxFailures: ACCOUNT_MAX_FAILURES, windowSeconds: ACCOUNT_WINDOW_SECONDS },
};

/**
 * The account-wide ceiling. Every attempt on a username (known or not) from a source that is not
 * exempt takes a slot of that username's hourly budget with one atomic upsert, before its password is
 * checked, so concurrent attempts queue on the row and never take more than 100 slots. Once the budget
 * is spent, attempts from such sources get 429 `login_locked` until the hour since the window's first
 * attempt is over. Exempt, so the ceiling cannot lock the owner out: an IP that has logged in
 * successfully to the account within the last 90 days (recorded on every success; older ones are
 * deleted, KnownSourcePruner), and a device presenting a valid
 * device credential for the account (issued by auth at a successful login: nothing the client can
 * invent; `X-Device-Id` is not one). Only failures count: a success from a source that took a slot
 * gives it back while the budget is not spent, and only to the window it was taken in (once spent,
 * the lock stands for the rest of the hour). A success does not reset the budget either (the owner's
 * devices do not need it, and a reset would hand an attacker a fresh 100 every time the owner logs in).
 *
 * A password login's two limits, this ceiling and the (username, IP) lockout (LockoutPolicy), cost it
 * two database round trips: `admit` takes both slots in one statement before the password check (the
 * pair's first: a locked pair is refused without spending the account's budget), and `succeeded`
 * frees the pair, remembers the source and gives the budget's slot back in one statement.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    private readonly repository: LoginThrottleRepository,
    private readonly lockout: LockoutPolicy,
    private readonly devices: DeviceCredentials,
    private readonly clock: Clock,
    private readonly metrics: AuthMetrics,
  ) {}

  /**
   * Before the password check: takes a slot of the (username, IP) pair and, unless the source is
   * exempt, of the account's budget; refuses a locked pair, or a spent budget. Answers when it took the
   * pair's slot and the window it took the budget's in (`budget` when it took one): what `succeeded`
   * and `notChecked` give them back to.
   */
  async admit(source: LoginSource): Promise<TakenSlots> {
    const deviceExempt = await this.hasDeviceCredential(source);
    const now = this.clock.date();
    const { pair, budget } = await this.repository.admit(
      source.username,
      source.clientIp,
      now,
      { deviceExempt, knownSince: new Date(now.getTime() - KNOWN_SOURCE_TTL_MS) },
      LOGIN_RULES,
    );
    const locked = this.lockout.refusalOf(pair, now);
    if (locked) throw locked;
    if (!budget) return { pair: now };
    const spent = this.budgetRefusal(budget, now);
    if (spent) throw spent;
    return { pair: now, budget: budget.windowStartedAt };
  }

  /**
   * After a successful login: frees the pair, gives back the budget's slot the attempt took (`slots`, as
   * `admit` answered: only failures count, ASVS 2.2.1; to the window it was taken in only), remembers
   * its IP as the account's own, and returns a new device credential for the device (exempt from now on
   * when it presents it).
   */
  async succeeded(source: LoginSource, userId: string, slots: TakenSlots): Promise<string> {
    const now = this.clock.now();
    await this.repository.recordSuccess(
      source.username,
      source.clientIp,
      new Date(now),
      new Date(now - KNOWN_SOURCE_TTL_MS),
      slots.budget,
    );
    return this.devices.issue(source.username, userId);
  }

  /**
   * After an attempt whose password could not be checked (identity did not answer): no failure, so it
   * gives back the slots `admit` took (`slots`: the pair's while the pair still counts it, the budget's
   * to the window it was taken in). Best effort: the caller answers the outage either way.
   */
  async notChecked(source: LoginSource, slots: TakenSlots): Promise<void> {
    await this.repository.giveBack(source.username, source.clientIp, slots, PAIR_RULES).catch(() => undefined);
  }

  /**
   * Slots are given back (by successes) only while nothing was refused, so once an attempt is refused
   * every later one is too, until the window ends: `refused` > 0 means this one was.
   */
  private budgetRefusal(budget: AccountBudget, now: Date): DomainError | undefined {
    if (budget.refused === 0) return undefined;
    if (budget.refused === 1) this.metrics.lockStarted('account');
    const endsAt = budget.windowStartedAt.getTime() + ACCOUNT_WINDOW_SECONDS * 1000;
    return loginLocked(endsAt, now, 'login_locked_account');
  }

  /** A device credential auth issued for this username (a known IP is the statement's to find). */
  private hasDeviceCredential(source: LoginSource): Promise<boolean> | false {
    return source.deviceToken ? this.devices.isValidFor(source.username, source.deviceToken) : false;
  }
}
