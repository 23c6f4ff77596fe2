import { apiUsageKey } from '@acct/limits';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';

/**
 * Today's API requests of an org, as counted by the gateways in Redis. While Redis is away the last
 * value read is reported.
 */
@Injectable()
export class ApiUsageReader implements OnModuleDestroy {
  private readonly redis: Redis;
  private readonly lastKnown = new Map<string, number>();

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    this.redis = new Redis(config.REDIS_URL, {
      keyPrefix: config.REDIS_KEY_PREFIX,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 200,
    });
    this.redis.on('error', () => undefined);
  }

  async today(orgId: string, now = Date.now()): Promise<number> {
    const key = apiUsageKey(orgId, now);
    try {
      const value = Number((await this.redis.get(key)) ?? 0);
      this.lastKnown.set(key, value);
      return value;
    } catch {
      return this.lastKnown.get(key) ?? 0;
    }
  }

  onModuleDestroy() {
    this.redis.disconnect();
  }
}
