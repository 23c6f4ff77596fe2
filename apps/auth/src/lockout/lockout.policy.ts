import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { AuthMetrics } from '../metrics/auth-metrics';
import { LockoutRepository } from './lockout.repository';
import { LoginSource } from './login-source';
import { PairSlot } from './login-throttle.repository';

/** Contract §4: 5 failed attempts of one (username, IP) within 15 minutes lock that pair for 15 minutes. */
export const MAX_FAILURES = 5;
export const WINDOW_SECONDS = 15 * 60;
export const LOCK_SECONDS = 15 * 60;
export const PAIR_RULES = { maxFailures: MAX_FAILURES, windowSeconds: WINDOW_SECONDS, lockSeconds: LOCK_SECONDS };

/** 429 `login_locked`, to retry when the lock ends at `endsAt` (ms). */
export const loginLocked = (endsAt: number, now: Date, auditReason?: string): DomainError =>
  new DomainError('login_locked', 'Too many failed logins; this login is locked for a while.', {
    retryAfter: Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000)),
    extensions: { error: 'login_locked', error_description: 'Too many failed logins.' },
    ...(auditReason ? { auditReason } : {}),
  });

/**
 * Lockout per (normalised username, client IP; an IPv6 client by its /64), kept in the auth database. Every attempt first takes
 * a slot with one atomic upsert (concurrent attempts on one pair queue on its row), so however many
 * arrive at once, at most five passwords are ever checked before the pair locks; the lock lasts 15
 * minutes from the fifth attempt, and the sixth attempt, and every attempt while locked, is refused
 * with 429 `login_locked` without a password check, correct password or not. A failed attempt keeps
 * its slot; a success frees the pair. Unknown usernames are counted the same way, so the lock reveals
 * nothing about which accounts exist; other IPs are unaffected. A password login takes its pair's slot in the same statement as the account's budget
 * (LoginThrottle); `takeSlot` and `clear` are the pair alone, for the MFA settings' password check.
 */
@Injectable()
export class LockoutPolicy {
  constructor(
    private readonly repository: LockoutRepository,
    private readonly clock: Clock,
    private readonly metrics: AuthMetrics,
  ) {}

  /**
   * Before the password check: takes the attempt's slot, or refuses a locked pair. Answers when the slot
   * was taken (what `notChecked` gives back).
   */
  async takeSlot(source: LoginSource): Promise<Date> {
    const now = this.clock.date();
    const slot = await this.repository.takeSlot(source.username, source.clientIp, now, PAIR_RULES);
    const refusal = this.refusalOf(slot, now);
    if (refusal) throw refusal;
    return now;
  }

  /** After a successful check: frees the pair. */
  async clear(source: LoginSource): Promise<void> {
    await this.repository.clear(source.username, source.clientIp);
  }

  /**
   * After an attempt whose password could not be checked (identity did not answer): no failure, so its
   * slot is given back while the pair still counts it (`slotTakenAt`, as `takeSlot` answered). Best
   * effort: the caller answers the outage either way.
   */
  async notChecked(source: LoginSource, slotTakenAt: Date): Promise<void> {
    await this.repository.giveBack(source.username, source.clientIp, slotTakenAt, PAIR_RULES).catch(() => undefined);
  }

  /**
   * The refusal of a slot taken at `now`, undefined while the pair is not locked (the fifth attempt
   * arms the lock, from its own time; the attempts after it are refused); counts a lock at the first
   * attempt it refuses.
   */
  refusalOf(slot: PairSlot, now: Date): DomainError | undefined {
    if (slot.attempts <= MAX_FAILURES) return undefined;
    if (!slot.lockedUntil || slot.lockedUntil.getTime() <= now.getTime()) return undefined;
    // Attempts keep counting while locked, so only the first attempt the lock refuses sees MAX + 1.
    if (slot.attempts === MAX_FAILURES + 1) this.metrics.lockStarted('pair');
    return loginLocked(slot.lockedUntil.getTime(), now);
  }
}
