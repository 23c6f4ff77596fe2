import { loadPlatformConfig } from '../config';
import { ApiUsageReader } from './api-usage.reader';

const DAY_MS = 86_400_000;
const MONDAY = Date.UTC(2026, 10, 23, 12);

/** The reader with its Redis replaced: `get` answers from `counts` by key, or fails while `away`. */
function readerWith(counts: Record<string, string>) {
  const reader = new ApiUsageReader(loadPlatformConfig({ REDIS_URL: 'redis://127.0.0.1:1' }));
  reader.onModuleDestroy();
  const redis = {
    away: false,
    get: (key: string) =>
      redis.away ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve(counts[key] ?? null),
  };
  Object.assign(reader, { redis });
  return { reader, redis, lastKnown: () => (reader as unknown as { lastKnown: Map<string, unknown> }).lastKnown };
}

describe('ApiUsageReader', () => {
  it("reports today's last value read while Redis is away, and 0 for a day it never read", async () => {
    const { reader, redis } = readerWith({ 'usage:api:{org-1}:2026-11-23': '41' });
    expect(await reader.today('org-1', MONDAY)).toBe(41);
    redis.away = true;
    expect(await reader.today('org-1', MONDAY + 1000)).toBe(41);
    expect(await reader.today('org-1', MONDAY + DAY_MS)).toBe(0);
  });

  it('keeps one value per org however many days it reads', async () => {
    const { reader, lastKnown } = readerWith({});
    for (let day = 0; day < 30; day += 1) {
      await reader.today('org-1', MONDAY + day * DAY_MS);
      await reader.today('org-2', MONDAY + day * DAY_MS);
    }
    expect(lastKnown().size).toBe(2);
  });
});
