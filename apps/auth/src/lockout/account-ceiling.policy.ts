import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { AuthMetrics } from '../metrics/auth-metrics';
import { AccountCeilingRepository, SourceKind } from './account-ceiling.repository';
import { LoginSource } from './login-source';

/** OWASP ASVS 2.2.1: at most 100 failed attempts an hour on one account, across all IPs. */
export const ACCOUNT_MAX_FAILURES = 100;
export const ACCOUNT_WINDOW_SECONDS = 60 * 60;

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
export class AccountCeilingPolicy {
  constructor(
    private readonly repository: AccountCeilingRepository,
    private readonly clock: Clock,
    private readonly metrics: AuthMetrics,
  ) {}

  /** Before the password check: takes a slot of the account's budget, or refuses once it is spent. */
  async takeSlot(source: LoginSource): Promise<void> {
    if (await this.repository.isKnownSource(source.username, sourcesOf(source))) return;
    const now = this.clock.date();
    const budget = await this.repository.takeSlot(source.username, now, {
      maxFailures: ACCOUNT_MAX_FAILURES,
      windowSeconds: ACCOUNT_WINDOW_SECONDS,
    });
    // Slots are given back (by successes) only while nothing was refused, so once an attempt is
    // refused every later one is too, until the window ends: `refused` > 0 means this one was.
    if (!budget || budget.refused === 0) return;
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
   * After a successful login: gives back the slot a new source took (only failures count, ASVS
   * 2.2.1) and remembers its IP and device as the account's own: exempt from now on.
   */
  async rememberSource(source: LoginSource): Promise<void> {
    const now = this.clock.date();
    // A source none of whose parts was known yet took a slot before its password check.
    let tookSlot = true;
    for (const [kind, value] of sourcesOf(source)) {
      if (!(await this.repository.rememberSource(source.username, kind, value, now))) tookSlot = false;
    }
    if (tookSlot) await this.repository.giveBackSlot(source.username);
  }
}

/** The attempt's IP and device id, when it has them. */
function sourcesOf(source: LoginSource): Array<[SourceKind, string]> {
  const sources: Array<[SourceKind, string]> = [];
  if (source.clientIp) sources.push(['ip', source.clientIp]);
  if (source.deviceId) sources.push(['device', source.deviceId]);
  return sources;
}
