import { METRICS_REGISTRY } from '@acct/observability';
import { failFastRedis } from '@acct/redis';
import { Global, Inject, Module, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';

import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { LIMIT_REQUEST, LimitRequest } from '../http/framework-errors';
import { ApiUsageCounter } from './api-usage';
import { GATEWAY_REDIS } from './gateway-redis';
import { API_USAGE, RATE_LIMITER, RateLimitHook } from './rate-limit.hook';
import { RateLimiter } from './rate-limiter';
import { RateLimitsController } from './rate-limits.controller';
import { TierCache } from './tier-cache';
import { RedisTokenBuckets } from './token-buckets';

export { GATEWAY_REDIS } from './gateway-redis';

/** Rate limits: Redis buckets (in-process while Redis is away), tiers from the platform service. */
@Global()
@Module({
  controllers: [RateLimitsController],
  providers: [
    {
      provide: GATEWAY_REDIS,
      inject: [GATEWAY_CONFIG],
      // The limiter reports an outage and falls back to each gateway's own buckets.
      useFactory: (config: GatewayConfig) =>
        failFastRedis(config.REDIS_URL, {
          keyPrefix: config.REDIS_KEY_PREFIX,
          commandTimeoutMs: config.RATE_LIMIT_REDIS_TIMEOUT_MS,
          connectTimeoutMs: 1000,
          retryStepMs: 100,
          // A request sends one command, written at once. Auto-pipelining (one write per event-loop turn)
          // cost the gateway 69 µs a rate-limits request against 54 without it (bench, 2026-11-27).
          extra: { enableAutoPipelining: false },
        }),
    },
    {
      provide: RATE_LIMITER,
      inject: [GATEWAY_REDIS, METRICS_REGISTRY],
      useFactory: (redis: Redis, registry: Registry) =>
        new RateLimiter(
          new RedisTokenBuckets(redis),
          undefined,
          new Counter({
            name: 'gateway_rate_limit_decisions_total',
            help: 'Rate-limit decisions by endpoint group, outcome and where they were made (redis or local).',
            labelNames: ['group', 'outcome', 'source'],
            registers: [registry],
          }),
        ),
    },
    { provide: API_USAGE, inject: [GATEWAY_REDIS], useFactory: (redis: Redis) => new ApiUsageCounter(redis) },
    TierCache,
    RateLimitHook,
    {
      provide: LIMIT_REQUEST,
      inject: [RateLimitHook],
      useFactory:
        (hook: RateLimitHook): LimitRequest =>
        (request, reply) =>
          hook.handle(request, reply),
    },
  ],
  // GATEWAY_REDIS: health probes the limiter's own connection (health/health-reporter.ts).
  exports: [RateLimitHook, TierCache, GATEWAY_REDIS],
})
export class RateLimitsModule implements OnModuleDestroy {
  constructor(@Inject(GATEWAY_REDIS) private readonly redis: Redis) {}

  onModuleDestroy() {
    this.redis.disconnect();
  }
}
