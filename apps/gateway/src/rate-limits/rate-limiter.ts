import { bucketCapacity, BucketDecision, RateLimitTier } from '@acct/limits';
import { Logger } from '@nestjs/common';
import { Counter } from 'prom-client';

import { InProcessTokenBuckets, TokenBuckets } from './token-buckets';

export interface RateLimitDecision extends BucketDecision {
  capacity: number;
  /** Milliseconds to refill an empty bucket: the policy's window. */
  windowMs: number;
  source: 'redis' | 'local';
}

/**
 * Decides with the shared Redis buckets; when Redis fails or is slow, with this instance's own
 * buckets, so the gateway keeps serving (contract §2) and goes back to Redis as soon as it answers.
 */
export class RateLimiter {
  private readonly logger = new Logger('rate-limit');
  private usingFallback = false;

  constructor(
    private readonly shared: TokenBuckets,
    private readonly local: TokenBuckets = new InProcessTokenBuckets(),
    private readonly decisions?: Counter<'group' | 'outcome' | 'source'>,
  ) {}

  async take(tier: RateLimitTier, key: string): Promise<RateLimitDecision> {
    const capacity = bucketCapacity(tier);
    const ratePerMs = tier.ratePerMinute / 60_000;
    const windowMs = capacity / ratePerMs;
    const bucket = `${tier.group}:${key}`;
    let decision: RateLimitDecision;
    try {
      decision = { ...(await this.shared.take(bucket, capacity, ratePerMs)), capacity, windowMs, source: 'redis' };
      if (this.usingFallback) this.logger.log('Redis answers again: back to shared rate-limit buckets');
      this.usingFallback = false;
    } catch (error) {
      if (!this.usingFallback) {
        this.logger.warn(`Redis unavailable (${(error as Error).message}): rate limits fall back to this instance`);
      }
      this.usingFallback = true;
      decision = { ...(await this.local.take(bucket, capacity, ratePerMs)), capacity, windowMs, source: 'local' };
    }
    this.decisions?.inc({
      group: tier.group,
      outcome: decision.allowed ? 'allowed' : 'limited',
      source: decision.source,
    });
    return decision;
  }
}
