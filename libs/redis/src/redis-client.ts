import Redis, { RedisOptions } from 'ioredis';

export interface FailFastRedisOptions {
  keyPrefix?: string;
  /** How long a command may wait for its answer before it fails. */
  commandTimeoutMs: number;
  /** How long opening a connection may take (ioredis' default, 10 s, when not given). */
  connectTimeoutMs?: number;
  /** Reconnection waits grow by this much per attempt, up to ten steps (ioredis' default when not given). */
  retryStepMs?: number;
  /** The rest of ioredis' options, for what a caller needs beyond these (`lazyConnect`, pipelining). */
  extra?: Pick<RedisOptions, 'lazyConnect' | 'enableAutoPipelining'>;
}

/**
 * A Redis client for a request path that must not wait for Redis: while it is away a command fails at
 * once (no offline queue, no retries of a command), and each caller decides what that means (a local
 * bucket, the last value read, unready). A connection that answers nothing for `max(2 s, the command
 * timeout)` is closed and another opened: a failover or a partition leaves it open and silent, and a
 * command's timeout alone never replaces it. Its `error` events are the callers' failing commands to
 * report, not an unhandled event that ends the process.
 */
export function failFastRedis(url: string, options: FailFastRedisOptions): Redis {
  const step = options.retryStepMs;
  const redis = new Redis(url, {
    keyPrefix: options.keyPrefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    socketTimeout: Math.max(2000, options.commandTimeoutMs),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeout: options.connectTimeoutMs }),
    ...(step === undefined ? {} : { retryStrategy: (attempt: number) => Math.min(attempt * step, 10 * step) }),
    ...options.extra,
  });
  redis.on('error', () => undefined);
  return redis;
}
