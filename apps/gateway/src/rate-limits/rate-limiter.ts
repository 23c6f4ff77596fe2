import { bucketCapacity, BucketRate, RateLimitGroup, RateLimitTier } from '@acct/limits';
import { Logger } from '@nestjs/common';
import { Counter } from 'prom-client';

import { UsageCount } from './api-usage';
import { CountedDecision, InProcessTokenBuckets, TokenBuckets } from './token-buckets';

export interface RateLimitDecision extends CountedDecision {
  capacity: number;
  /** Milliseconds to refill an empty bucket: the policy's window. */
  windowMs: number;
  /**
   * `redis`: the shared buckets; `instance`: a group this instance limits on its own by design
   * (PER_INSTANCE_GROUPS); `local`: this instance's fallback for every other group while Redis is away.
   */
  source: 'redis' | 'instance' | 'local';
}

/**
 * Groups whose buckets each gateway instance keeps in its own memory, never in Redis. `system.health`
 * is answered from the instance's memory (health/health-reporter.ts) and costs no shared resource, so
 * its limit protects the instance, and probes (Kubernetes, load balancers) ask each instance on its
 * own from the same address: a bucket shared by every instance would let adding instances throttle
 * their probes. Kept here, the probe path makes no backend round trip at all (issue 15) and does not
 * change while Redis is away. The cost: one address may call health N × 600/min across N instances.
 */
export const PER_INSTANCE_GROUPS: ReadonlySet<RateLimitGroup> = new Set(['system.health']);

/**
 * Decides with the shared Redis buckets; when Redis fails or is slow, with this instance's own
 * buckets, so the gateway keeps serving (contract §2) and goes back to Redis as soon as it answers.
 * The groups of `perInstance` are always decided with this instance's buckets.
 */
export class RateLimiter {
  private readonly logger = new Logger('rate-limit');
  private usingFallback = false;

  constructor(
    private readonly shared: TokenBuckets,
    private readonly local: TokenBuckets = new InProcessTokenBuckets(),
    private readonly decisions?: Counter<'group' | 'outcome' | 'source'>,
    private readonly perInstance: ReadonlySet<string> = PER_INSTANCE_GROUPS,
  ) {}

  /** Whether `group`'s buckets are the shared ones (while Redis answers), not this instance's own. */
  isShared(group: string): boolean {
    return !this.perInstance.has(group);
  }

  /**
   * Takes a token from `key`'s bucket of the tier's group. `count` goes with a shared decision (see
   * TokenBuckets.take); `counted` says whether it was incremented.
   */
  async take(tier: RateLimitTier, key: string, count?: UsageCount): Promise<RateLimitDecision> {
    const capacity = bucketCapacity(tier);
    // An empty bucket fills in capacity / rate, which is the burst in seconds: written so, it is exact.
    const windowMs = tier.burst * 1000;
    const bucket = `${tier.group}:${key}`;
    const decision: RateLimitDecision = this.isShared(tier.group)
      ? await this.takeShared(bucket, tier, capacity, windowMs, count)
      : { ...(await this.local.take(bucket, tier)), capacity, windowMs, source: 'instance' };
    this.decisions?.inc({
      group: tier.group,
      outcome: decision.overQuota ? 'over_quota' : decision.allowed ? 'allowed' : 'limited',
      source: decision.source,
    });
    return decision;
  }

  private async takeShared(
    bucket: string,
    rate: BucketRate,
    capacity: number,
    windowMs: number,
    count: UsageCount | undefined,
  ): Promise<RateLimitDecision> {
    try {
      const decision = await this.shared.take(bucket, rate, count);
      if (this.usingFallback) this.logger.log('Redis answers again: back to shared rate-limit buckets');
      this.usingFallback = false;
      return { ...decision, capacity, windowMs, source: 'redis' };
    } catch (error) {
      if (!this.usingFallback) {
        this.logger.warn(`Redis unavailable (${(error as Error).message}): rate limits fall back to this instance`);
      }
      this.usingFallback = true;
      return { ...(await this.local.take(bucket, rate)), capacity, windowMs, source: 'local' };
    }
  }
}
