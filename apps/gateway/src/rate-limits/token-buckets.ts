import { BucketDecision, BucketState, takeToken } from '@acct/limits';
import Redis from 'ioredis';

/**
 * One atomic decision per request, in one round trip: refill by the time elapsed on the Redis
 * server's clock (so every gateway instance agrees), take a token if there is one, and let an idle
 * bucket expire once it would be full again. A bucket is one key, so it works on Redis Cluster.
 */
const TAKE_TOKEN_LUA = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = capacity
  ts = now
end
if now > ts then
  tokens = math.min(capacity, tokens + (now - ts) * rate)
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', now)
local untilFull = math.ceil((capacity - tokens) / rate)
redis.call('PEXPIRE', KEYS[1], untilFull + 1000)
local untilToken = 0
if tokens < 1 then
  untilToken = math.ceil((1 - tokens) / rate)
end
return { allowed, math.floor(tokens), untilFull, untilToken, now }
`;

export interface TokenBuckets {
  take(key: string, capacity: number, ratePerMs: number): Promise<BucketDecision>;
}

type TakeTokenCommand = (
  key: string,
  capacity: string,
  rate: string,
) => Promise<[number, number, number, number, number]>;

export class RedisTokenBuckets implements TokenBuckets {
  constructor(private readonly redis: Redis) {
    redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
  }

  async take(key: string, capacity: number, ratePerMs: number): Promise<BucketDecision> {
    const command = (this.redis as unknown as { takeToken: TakeTokenCommand }).takeToken.bind(this.redis);
    const [allowed, remaining, msUntilFull, msUntilToken, now] = await command(
      `rl:{${key}}`,
      String(capacity),
      String(ratePerMs),
    );
    return { allowed: allowed === 1, remaining, msUntilFull, msUntilToken, now };
  }
}

/**
 * This instance's own buckets: the same arithmetic in this process, for the groups each instance
 * limits on its own and for every group while Redis is away (limits then hold per gateway instance
 * instead of across them). Buckets that would be full again are forgotten: once more than
 * `sweepAbove` are held, and then only when their number has doubled since the last sweep, so a map
 * of live buckets is not walked again on every decision.
 */
export class InProcessTokenBuckets implements TokenBuckets {
  private readonly buckets = new Map<string, BucketState & { fullAt: number }>();
  private sweepAt: number;

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly sweepAbove = 10_000,
  ) {
    this.sweepAt = sweepAbove;
  }

  /** Buckets held now (full ones not yet forgotten included). */
  get size(): number {
    return this.buckets.size;
  }

  take(key: string, capacity: number, ratePerMs: number): Promise<BucketDecision> {
    const now = this.clock();
    const { decision, state } = takeToken(this.buckets.get(key), capacity, ratePerMs, now);
    this.buckets.set(key, { ...state, fullAt: now + decision.msUntilFull });
    if (this.buckets.size > this.sweepAt) this.sweep(now);
    return Promise.resolve(decision);
  }

  private sweep(now: number) {
    for (const [key, bucket] of this.buckets) if (bucket.fullAt <= now) this.buckets.delete(key);
    this.sweepAt = Math.max(this.sweepAbove, this.buckets.size * 2);
  }
}
