import { randomUUID } from 'node:crypto';

import { apiUsageKey } from '@acct/limits';
import { waitFor } from '@acct/testing';
import Redis from 'ioredis';

import { ApiUsageCounter } from './api-usage';

describe('API usage counter (real Redis)', () => {
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');

  afterAll(() => redis.quit());

  it("counts every request in the org's daily counter, kept for three days", async () => {
    const orgId = randomUUID();
    const now = Date.now();
    const key = apiUsageKey(orgId, now);
    const counter = new ApiUsageCounter(redis);
    try {
      for (let i = 0; i < 3; i++) counter.count(orgId, now);

      await waitFor('three requests counted', async () => ((await redis.get(key)) === '3' ? true : undefined));
      const ttl = await redis.ttl(key);
      expect(ttl).toBeGreaterThan(3 * 24 * 3600 - 60);
      expect(ttl).toBeLessThanOrEqual(3 * 24 * 3600);
    } finally {
      await redis.del(key);
    }
  });
});
