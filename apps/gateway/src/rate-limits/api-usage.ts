import { apiUsageKey } from '@acct/limits';
import Redis from 'ioredis';

/** Counts each authenticated request against its org's daily `API requests` quota. */
export class ApiUsageCounter {
  constructor(private readonly redis: Redis) {}

  /** Best effort: a request is never failed or delayed because it could not be counted. */
  count(orgId: string, now = Date.now()): void {
    const key = apiUsageKey(orgId, now);
    this.redis
      .multi()
      .incr(key)
      .expire(key, 3 * 24 * 3600)
      .exec()
      .catch(() => undefined);
  }
}
