import Redis from 'ioredis';

/** The Redis key counting an org's API requests on one UTC day (read by the platform's quota). */
export const apiUsageKey = (orgId: string, day: string) => `usage:api:{${orgId}}:${day}`;
export const utcDay = (epochMs: number) => new Date(epochMs).toISOString().slice(0, 10);

/** Counts each authenticated request against its org's daily `API requests` quota. */
export class ApiUsageCounter {
  constructor(private readonly redis: Redis) {}

  /** Best effort: a request is never failed or delayed because it could not be counted. */
  count(orgId: string, now = Date.now()): void {
    const key = apiUsageKey(orgId, utcDay(now));
    this.redis
      .multi()
      .incr(key)
      .expire(key, 3 * 24 * 3600)
      .exec()
      .catch(() => undefined);
  }
}
