import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { AuthMetrics } from '../metrics/auth-metrics';
import { AccountCeilingRepository } from './account-ceiling.repository';
import { DeviceCredentials } from './device-credentials';
import { LoginSource } from './login-source';

/** OWASP ASVS 2.2.1: at most 100 failed attempts an hour on one account, across all IPs. */
export const ACCOUNT_MAX_FAILURES = 100;
export const ACCOUNT_WINDOW_SECONDS = 60 * 60;
/**
 * How long a known IP stays exempt after its last successful login (each success starts it again):
 * as long as a device credential lives, so neither exemption outlasts the other.
 */
export const KNOWN_SOURCE_TTL_MS = 90 * 24 * 60 * 60 * 1000;

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
 * gives it back while the budget is not spent (once spent,
 * the lock stands for the rest of the hour). A success does not reset the budget either (the owner's
 * devices do not need it, and a reset would hand an attacker a fresh 100 every time the owner logs in).
 */
@Injectable()
export class AccountCeilingPolicy {
  constructor(
    private readonly repository: AccountCeilingRepository,
    private readonly devices: DeviceCredentials,
    private readonly clock: Clock,
    private readonly metrics: AuthMetrics,
  ) {}

  /**
   * Before the password check: takes a slot of the account's budget, or refuses once it is spent.
   * True when it took one (the source is not exempt).
   */
  async takeSlot(source: LoginSource): Promise<boolean> {
    if (await this.isExempt(source)) return false;
    const now = this.clock.date();
    const budget = await this.repository.takeSlot(source.username, now, {
      maxFailures: ACCOUNT_MAX_FAILURES,
      windowSeconds: ACCOUNT_WINDOW_SECONDS,
    });
    // Slots are given back (by successes) only while nothing was refused, so once an attempt is
    // refused every later one is too, until the window ends: `refused` > 0 means this one was.
    if (!budget || budget.refused === 0) return true;
    if (budget.refused === 1) this.metrics.lockStarted('account');
    const endsAt = budget.windowStartedAt.getTime() + ACCOUNT_WINDOW_SECONDS * 1000;
    const retryAfter = Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000));
    throw new DomainError('login_locked', 'Too many failed logins; this login is locked for a while.', {
      retryAfter,
      extensions: { error: 'login_locked', error_description: 'Too many failed logins.' },
      auditReason: 'login_locked_account',
    });
  }

  /**
   * After a successful login: gives back the slot the attempt took (`tookSlot`: only failures count,
   * ASVS 2.2.1), remembers its IP as the account's own, and returns a new device credential for the
   * device (exempt from now on when it presents it).
   */
  async rememberSource(source: LoginSource, userId: string, tookSlot: boolean): Promise<string> {
    const now = this.clock.now();
    await this.repository.recordSuccess(
      source.username,
      source.clientIp
        ? { kind: 'ip', value: source.clientIp, now: new Date(now), expiredAt: new Date(now - KNOWN_SOURCE_TTL_MS) }
        : undefined,
      tookSlot,
    );
    return this.devices.issue(source.username, userId);
  }

  /** A known IP (a success within 90 days), or a device credential auth issued for this username. */
  private async isExempt(source: LoginSource): Promise<boolean> {
    if (source.deviceToken && (await this.devices.isValidFor(source.username, source.deviceToken))) return true;
    if (!source.clientIp) return false;
    const since = new Date(this.clock.now() - KNOWN_SOURCE_TTL_MS);
    return this.repository.isKnownSource(source.username, [['ip', source.clientIp]], since);
  }
}
