import { apiUsageKey } from '@acct/limits';
import Redis from 'ioredis';

/** Kept three days, so yesterday's count is still there to read after midnight. */
const RETENTION_SECONDS = 3 * 24 * 3600;

/** A quota that refuses nothing: the request is counted all the same. */
export const NO_QUOTA = -1;

/** A counter to increment for a request: the org's daily API requests, and its quota (NO_QUOTA: none). */
export interface UsageCount {
  key: string;
  retentionSeconds: number;
  limit: number;
}

/**
 * How a script counts a request (Lua): the counter `key` is incremented, into `count`, and given its
 * expiry of `retentionSeconds` when this increment created it. Used alone (COUNT_LUA) and inside the
 * bucket script (token-buckets.ts).
 */
export const countRequestLua = (key: string, retentionSeconds: string) => `
local count = redis.call('INCR', ${key})
if count == 1 then redis.call('EXPIRE', ${key}, ${retentionSeconds}) end
`;

/** One command and one reply per request (a MULTI of INCR and EXPIRE was four of each). */
const COUNT_LUA = `${countRequestLua('KEYS[1]', 'ARGV[1]')}
return count
`;

type CountCommand = (key: string, retentionSeconds: string) => Promise<number>;

/**
 * Counts each authenticated request against its org's daily `API requests` quota: with the request's
 * per-token bucket decision when it has one (`usageOf`, one script for both), else on its own (`count`).
 */
export class ApiUsageCounter {
  private readonly countRequest: CountCommand;

  constructor(redis: Redis) {
    redis.defineCommand('countApiRequest', { numberOfKeys: 1, lua: COUNT_LUA });
    this.countRequest = (redis as unknown as { countApiRequest: CountCommand }).countApiRequest.bind(redis);
  }

  /**
   * The org's counter of the day, for a bucket decision to increment (RateLimiter.take) unless it has
   * reached `limit` (NO_QUOTA: counted, never refused).
   */
  usageOf(orgId: string, limit: number, now = Date.now()): UsageCount {
    return { key: apiUsageKey(orgId, now), retentionSeconds: RETENTION_SECONDS, limit };
  }

  /** Best effort: a request is never failed or delayed because it could not be counted. */
  count(orgId: string, now = Date.now()): void {
    const { key, retentionSeconds } = this.usageOf(orgId, NO_QUOTA, now);
    this.countRequest(key, String(retentionSeconds)).catch(() => undefined);
  }
}
