import { apiUsageKey } from '@acct/limits';
import { failFastRedis } from '@acct/redis';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';

/**
 * Today's API requests of an org, as counted by the gateways in Redis. While Redis is away the last
 * value read today is reported (0 on a day not read yet); one value is kept per org, so the memory
 * does not grow by a day's key per org each day.
 */
@Injectable()
export class ApiUsageReader implements OnModuleDestroy {
  private readonly redis: Redis;
  /** Per org: the last value read, and of which day's counter (its key). */
  private readonly lastKnown = new Map<string, { key: string; value: number }>();

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    this.redis = failFastRedis(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX, commandTimeoutMs: 200 });
  }

  async today(orgId: string, now = Date.now()): Promise<number> {
    const key = apiUsageKey(orgId, now);
    try {
      const value = Number((await this.redis.get(key)) ?? 0);
      this.lastKnown.set(orgId, { key, value });
      return value;
    } catch {
      const last = this.lastKnown.get(orgId);
      return last?.key === key ? last.value : 0;
    }
  }

  onModuleDestroy() {
    this.redis.disconnect();
  }
}
