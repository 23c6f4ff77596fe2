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
  tokens: number;
  updatedAt: number;
}

/**
 * Continuous-refill token bucket, the same arithmetic as the Redis script: refill by elapsed time ×
 * rate, never above capacity; admit when at least one whole token is there.
 */
export function takeToken(
  state: BucketState | undefined,
  capacity: number,
  ratePerMs: number,
  now: number,
): { decision: BucketDecision; state: BucketState } {
  let tokens = state ? Math.min(capacity, state.tokens + Math.max(0, now - state.updatedAt) * ratePerMs) : capacity;
  const allowed = tokens >= 1;
  if (allowed) tokens -= 1;
  return {
    state: { tokens, updatedAt: now },
    decision: {
      allowed,
      remaining: Math.floor(tokens),
      msUntilFull: Math.ceil((capacity - tokens) / ratePerMs),
      msUntilToken: tokens >= 1 ? 0 : Math.ceil((1 - tokens) / ratePerMs),
      now,
    },
  };
}
