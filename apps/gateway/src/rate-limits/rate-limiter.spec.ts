import { BucketRate, STANDARD_TIERS } from '@acct/limits';

import { NO_QUOTA, UsageCount } from './api-usage';
import { RateLimiter } from './rate-limiter';
import { InProcessTokenBuckets, TokenBuckets } from './token-buckets';

const tier = (group: string) => STANDARD_TIERS.find((candidate) => candidate.group === group)!;

/** Stands in for Redis: records the buckets and counts asked for, and fails while `down`. */
class SharedBuckets implements TokenBuckets {
  readonly asked: string[] = [];
  readonly counted: string[] = [];
  down = false;
  private readonly buckets = new InProcessTokenBuckets(() => 0);

  async take(key: string, rate: BucketRate, count?: UsageCount) {
    this.asked.push(key);
    if (this.down) throw new Error('connection refused');
    if (count) this.counted.push(count.key);
    return { ...(await this.buckets.take(key, rate)), counted: count !== undefined };
  }
}

const usage: UsageCount = { key: 'usage:api:{org-1}:2026-11-27', retentionSeconds: 259_200, limit: NO_QUOTA };

describe('RateLimiter', () => {
  const now = 1_700_000_000_000;

  it('decides system.health with this instance buckets, never the shared ones, at the tier capacity', async () => {
    const shared = new SharedBuckets();
    const limiter = new RateLimiter(shared, new InProcessTokenBuckets(() => now));
    const decisions = [];
    // 600/min with burst 10: a capacity of 100; the clock stands still, so nothing refills.
    for (let index = 0; index < 101; index += 1) decisions.push(await limiter.take(tier('system.health'), 'ip:1'));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(100);
    expect(decisions.at(-1)).toMatchObject({ allowed: false, remaining: 0, source: 'instance', capacity: 100 });
    expect(shared.asked).toEqual([]);
  });

  it("admits exactly an override's whole capacity from a full bucket, and states it as the limit", async () => {
    const limiter = new RateLimiter(new SharedBuckets(), new InProcessTokenBuckets(() => now));
    // 11/min with burst 300: a bucket of 11 / 60 × 300 = 55 requests.
    const override = { group: 'users.read', ratePerMinute: 11, burst: 300, scope: 'per-token' } as const;
    const decisions = [];
    for (let index = 0; index < 56; index += 1) decisions.push(await limiter.take(override, 'token:a'));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(55);
    expect(Math.floor(decisions[0].capacity)).toBe(55);
  });

  it('gives the window an empty bucket takes to refill as the burst in seconds, to the millisecond', async () => {
    const limiter = new RateLimiter(new SharedBuckets(), new InProcessTokenBuckets(() => now));
    // capacity / rate = (rate / 60 × burst) / rate = burst seconds, whatever the rate.
    for (const [ratePerMinute, burst] of [
      [3, 3],
      [5, 7],
      [11, 300],
    ]) {
      const decision = await limiter.take({ group: 'users.read', ratePerMinute, burst, scope: 'per-token' }, 'token:w');
      expect([ratePerMinute, burst, decision.windowMs]).toEqual([ratePerMinute, burst, burst * 1000]);
    }
  });

  it('keeps every other group in the shared buckets', async () => {
    const shared = new SharedBuckets();
    const limiter = new RateLimiter(shared, new InProcessTokenBuckets(() => now));
    await limiter.take(tier('system.health'), 'ip:1');
    const decision = await limiter.take(tier('auth'), 'ip:1');
    expect(decision.source).toBe('redis');
    expect(shared.asked).toEqual(['auth:ip:1']);
  });

  it('falls back to this instance while the shared buckets fail, and goes back once they answer', async () => {
    const shared = new SharedBuckets();
    const limiter = new RateLimiter(shared, new InProcessTokenBuckets(() => now));
    shared.down = true;
    expect(await limiter.take(tier('users.read'), 'token:a')).toMatchObject({ allowed: true, source: 'local' });
    shared.down = false;
    expect(await limiter.take(tier('users.read'), 'token:a')).toMatchObject({ allowed: true, source: 'redis' });
  });

  it('counts the request with a shared decision, and says it was not counted when Redis did not decide', async () => {
    const shared = new SharedBuckets();
    const limiter = new RateLimiter(shared, new InProcessTokenBuckets(() => now));
    expect(limiter.isShared('users.read')).toBe(true);
    expect(limiter.isShared('system.health')).toBe(false);
    expect(await limiter.take(tier('users.read'), 'token:a', usage)).toMatchObject({ source: 'redis', counted: true });
    expect(shared.counted).toEqual([usage.key]);
    shared.down = true;
    expect(await limiter.take(tier('users.read'), 'token:a', usage)).toMatchObject({ source: 'local', counted: false });
    expect(await limiter.take(tier('system.health'), 'ip:1', usage)).toMatchObject({
      source: 'instance',
      counted: false,
    });
    expect(shared.counted).toEqual([usage.key]);
  });

  it('limits a group per instance only when told to', async () => {
    const shared = new SharedBuckets();
    const limiter = new RateLimiter(shared, new InProcessTokenBuckets(() => now), undefined, new Set());
    expect((await limiter.take(tier('system.health'), 'ip:1')).source).toBe('redis');
  });
});

describe('InProcessTokenBuckets', () => {
  it('forgets buckets that are full again once it holds more than its bound', async () => {
    let now = 0;
    const buckets = new InProcessTokenBuckets(() => now, 100);
    // One token each at 1 token/ms (60 000/min, burst 1: 1000 tokens): full again 1 ms later.
    for (let index = 0; index < 100; index += 1) await buckets.take(`ip:${index}`, { ratePerMinute: 60_000, burst: 1 });
    expect(buckets.size).toBe(100);
    now = 5;
    await buckets.take('ip:new', { ratePerMinute: 60_000, burst: 1 });
    expect(buckets.size).toBe(1);
  });

  it('keeps buckets that still hold a debt, and walks them again only once their number has doubled', async () => {
    let now = 0;
    const buckets = new InProcessTokenBuckets(() => now, 10);
    // One token each at 1 token/s (60/min, burst 10): full again 1 s later.
    for (let index = 0; index < 11; index += 1) await buckets.take(`ip:${index}`, { ratePerMinute: 60, burst: 10 });
    expect(buckets.size).toBe(11);
    now = 20_000;
    // Above the bound but not doubled since the last sweep: nothing is walked, all stay.
    for (let index = 11; index < 22; index += 1) await buckets.take(`ip:${index}`, { ratePerMinute: 60, burst: 10 });
    expect(buckets.size).toBe(22);
    // Doubled (23 > 22): the 11 full again since 1 s are forgotten, the 12 fresh ones kept.
    await buckets.take('ip:22', { ratePerMinute: 60, burst: 10 });
    expect(buckets.size).toBe(12);
  });
});
