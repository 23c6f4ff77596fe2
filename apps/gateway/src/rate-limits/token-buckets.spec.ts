import { randomUUID } from 'node:crypto';

import { apiUsageKey } from '@acct/limits';
import Redis from 'ioredis';

import { NO_QUOTA } from './api-usage';
import { hashTagOf, RedisTokenBuckets } from './token-buckets';

describe('RedisTokenBuckets (real Redis)', () => {
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const buckets = new RedisTokenBuckets(redis);
  // 3 tokens, refilled at one a minute: nothing comes back during the test.
  const rate = { ratePerMinute: 1, burst: 180 };

  afterAll(() => redis.quit());

  it("takes a token and counts the request in one step, the bucket in its org counter's hash slot", async () => {
    const orgId = randomUUID();
    const bucket = `users.read:token:${randomUUID()}`;
    const usage = { key: apiUsageKey(orgId, Date.now()), retentionSeconds: 3600, limit: NO_QUOTA };
    const bucketKey = `rl:{${orgId}}:${bucket}`;
    try {
      const decisions = [];
      for (let index = 0; index < 4; index += 1) decisions.push(await buckets.take(bucket, rate, usage));

      expect(decisions.map((decision) => [decision.allowed, decision.remaining, decision.counted])).toEqual([
        [true, 2, true],
        [true, 1, true],
        [true, 0, true],
        [false, 0, true],
      ]);
      // Every request is counted, the refused one too, as the API usage of the day.
      expect(await redis.get(usage.key)).toBe('4');
      const ttl = await redis.ttl(usage.key);
      expect(ttl).toBeGreaterThan(3600 - 60);
      expect(ttl).toBeLessThanOrEqual(3600);
      expect(await redis.exists(bucketKey)).toBe(1);
      expect(hashTagOf(bucketKey)).toBe(hashTagOf(usage.key));
    } finally {
      await redis.del(usage.key, bucketKey);
    }
  });

  it("refuses, without taking a token or counting, once the day's count has reached the org's quota", async () => {
    const orgId = randomUUID();
    const bucket = `users.read:token:${randomUUID()}`;
    const usage = { key: apiUsageKey(orgId, Date.now()), retentionSeconds: 3600, limit: 2 };
    const bucketKey = `rl:{${orgId}}:${bucket}`;
    try {
      const decisions = [];
      for (let index = 0; index < 3; index += 1) decisions.push(await buckets.take(bucket, rate, usage));
      expect(
        decisions.map(({ allowed, remaining, counted, overQuota }) => [allowed, remaining, counted, overQuota]),
      ).toEqual([
        [true, 2, true, false],
        [true, 1, true, false],
        [false, 1, false, true],
      ]);
      expect(await redis.get(usage.key)).toBe('2');
      // A quota raised later in the day admits again, counting on.
      expect(await buckets.take(bucket, rate, { ...usage, limit: 3 })).toMatchObject({
        allowed: true,
        overQuota: false,
      });
      expect(await redis.get(usage.key)).toBe('3');
      // A quota of 0 admits nothing.
      expect(await buckets.take(bucket, rate, { ...usage, limit: 0 })).toMatchObject({
        overQuota: true,
      });
    } finally {
      await redis.del(usage.key, bucketKey);
    }
  });

  it('admits exactly the quota of concurrent requests from many tokens, each counted once', async () => {
    const orgId = randomUUID();
    const usage = { key: apiUsageKey(orgId, Date.now()), retentionSeconds: 3600, limit: 25 };
    const secondConnection = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
    const buckets2 = new RedisTokenBuckets(secondConnection);
    const tokens = Array.from({ length: 20 }, () => `users.read:token:${randomUUID()}`);
    try {
      // Two connections (two gateways), 20 tokens with 3 tokens each: 60 requests for a quota of 25.
      const decisions = await Promise.all(
        tokens.flatMap((bucket, index) =>
          [0, 1, 2].map(() => (index % 2 === 0 ? buckets : buckets2).take(bucket, rate, usage)),
        ),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(25);
      expect(decisions.filter((decision) => decision.overQuota)).toHaveLength(35);
      expect(await redis.get(usage.key)).toBe('25');
    } finally {
      await redis.del(usage.key, ...tokens.map((bucket) => `rl:{${orgId}}:${bucket}`));
      await secondConnection.quit();
    }
  });

  it('says to the millisecond when the next token is due, whatever floating point makes of the rate', async () => {
    // 2/min with burst 59: 1.9666… tokens, one taken; the next is due 1000 ms after the first request.
    // Kept in tokens, the script said 1001 ms (Retry-After 2) and a full bucket 30 001 ms away.
    const answers = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const bucket = `users.read:token:${randomUUID()}`;
      try {
        const first = await buckets.take(bucket, { ratePerMinute: 2, burst: 59 });
        const second = await buckets.take(bucket, { ratePerMinute: 2, burst: 59 });
        const elapsed = second.now - first.now;
        answers.push([first.allowed, second.allowed, second.msUntilToken + elapsed, second.msUntilFull + elapsed]);
      } finally {
        await redis.del(`rl:{${bucket}}`);
      }
    }
    expect(answers).toEqual(Array.from({ length: 5 }, () => [true, false, 1000, 30_000]));
  });

  it('keeps a bucket decided without a count in a slot of its own, and counts nothing', async () => {
    const bucket = `auth:ip:${randomUUID()}`;
    const bucketKey = `rl:{${bucket}}`;
    try {
      expect(await buckets.take(bucket, rate)).toMatchObject({
        allowed: true,
        remaining: 2,
        counted: false,
      });
      expect(await redis.exists(bucketKey)).toBe(1);
    } finally {
      await redis.del(bucketKey);
    }
  });
});

describe('hashTagOf', () => {
  it('is what Redis Cluster hashes: the first non-empty {…}, else the whole key', () => {
    expect(hashTagOf('usage:api:{org-1}:2026-11-27')).toBe('org-1');
    expect(hashTagOf('rl:{org-1}:users.read:token:t')).toBe('org-1');
    expect(hashTagOf('a{b}{c}')).toBe('b');
    expect(hashTagOf('a{}{c}')).toBe('a{}{c}');
    expect(hashTagOf('plain')).toBe('plain');
    expect(hashTagOf('open{only')).toBe('open{only');
  });
});
