import type { RateLimitTier } from './tiers';

/** The outcome of taking one token from a bucket. */
export interface BucketDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  msUntilFull: number;
  /** Milliseconds until one token is available (0 when one is). */
  msUntilToken: number;
  /** The clock the decision was made on, in epoch milliseconds. */
  now: number;
}

export interface BucketState {
  /** Tokens left, in units (UNITS_PER_TOKEN a token). */
  units: number;
  updatedAt: number;
}

/** A bucket's tier: its rate per minute and burst, both whole numbers (what the platform stores). */
export type BucketRate = Pick<RateLimitTier, 'ratePerMinute' | 'burst'>;

/**
 * A token is kept as 60 000 units, so a bucket of whole `ratePerMinute` and `burst` is refilled by
 * exactly `ratePerMinute` units a millisecond and holds `ratePerMinute × burst × 1000` of them: every
 * quantity is an integer. Counted in tokens (a rate of `ratePerMinute / 60 000` a millisecond), a
 * refill came out a hair short of a whole token: a 2/min, burst 59 bucket said the next token was due
 * in 1001 ms (Retry-After 2) when it was due in 1000, and refused the request made at 1000.
 */
export const UNITS_PER_TOKEN = 60_000;

/** The bucket of `rate` in units: its capacity, and its refill a millisecond. */
export const bucketUnits = (rate: BucketRate) => ({
  capacity: rate.ratePerMinute * rate.burst * 1000,
  perMs: rate.ratePerMinute,
});

/**
 * Continuous-refill token bucket, the same arithmetic as the Redis script: refill by elapsed time ×
 * rate, never above capacity; admit when at least one whole token is there.
 */
export function takeToken(
  state: BucketState | undefined,
  rate: BucketRate,
  now: number,
): { decision: BucketDecision; state: BucketState } {
  const { capacity, perMs } = bucketUnits(rate);
  let units = state ? Math.min(capacity, state.units + Math.max(0, now - state.updatedAt) * perMs) : capacity;
  const allowed = units >= UNITS_PER_TOKEN;
  if (allowed) units -= UNITS_PER_TOKEN;
  return {
    state: { units, updatedAt: now },
    decision: {
      allowed,
      remaining: Math.floor(units / UNITS_PER_TOKEN),
      msUntilFull: Math.ceil((capacity - units) / perMs),
      msUntilToken: units >= UNITS_PER_TOKEN ? 0 : Math.ceil((UNITS_PER_TOKEN - units) / perMs),
      now,
    },
  };
}
