import { BucketDecision, BucketRate, BucketState, bucketUnits, takeToken, UNITS_PER_TOKEN } from '@acct/limits';
import Redis from 'ioredis';

import { countRequestLua, UsageCount } from './api-usage';

/**
 * One atomic decision per request, in one round trip: refill by the time elapsed on the Redis
 * server's clock (so every gateway instance agrees), take a token if there is one, and let an idle
 * bucket expire once it would be full again. With a second key (the org's daily API counter, kept
 * for ARGV[3] seconds) the request is counted in the same step, unless the day's count has reached
 * the org's quota ARGV[4] (negative: none): then no token is taken, nothing is counted and the answer says
 * so (its sixth value), so concurrent requests at every gateway admit exactly the quota. A bucket is
 * one key, and a counted bucket shares its counter's hash slot (RedisTokenBuckets), so it works on
 * Redis Cluster. Tokens are counted in units (UNITS_PER_TOKEN a token, ARGV[1] and ARGV[2] in units),
 * so every quantity is a whole number, exactly as in takeToken.
 */
const TAKE_TOKEN_LUA = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local unit = ${UNITS_PER_TOKEN}
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local overQuota = 0
if #KEYS > 1 then
  local quota = tonumber(ARGV[4])
  if quota >= 0 and (tonumber(redis.call('GET', KEYS[2])) or 0) >= quota then overQuota = 1 end
end
local state = redis.call('HMGET', KEYS[1], 'units', 'ts')
local units = tonumber(state[1])
local ts = tonumber(state[2])
if units == nil or ts == nil then
  units = capacity
  ts = now
end
if now > ts then
  units = math.min(capacity, units + (now - ts) * rate)
end
local allowed = 0
if overQuota == 0 and units >= unit then
  units = units - unit
  allowed = 1
end
redis.call('HSET', KEYS[1], 'units', string.format('%.17g', units), 'ts', now)
local untilFull = math.ceil((capacity - units) / rate)
redis.call('PEXPIRE', KEYS[1], untilFull + 1000)
local untilToken = 0
if units < unit then
  untilToken = math.ceil((unit - units) / rate)
end
if #KEYS > 1 and overQuota == 0 then
${countRequestLua('KEYS[2]', 'ARGV[3]')}
end
return { allowed, math.floor(units / unit), untilFull, untilToken, now, overQuota }
`;

/**
 * A decision, whether `count` was incremented with it, and whether the org's daily quota refused the
 * request (then `allowed` is false, no token was taken and nothing counted).
 */
export type CountedDecision = BucketDecision & { counted: boolean; overQuota: boolean };

export interface TokenBuckets {
  /**
   * Takes a token from the bucket `key`; `count`, when given, is incremented in the same step if these
   * buckets can (`counted`). Give `count` always or never for one bucket: it decides where the bucket is.
   */
  take(key: string, rate: BucketRate, count?: UsageCount): Promise<CountedDecision>;
}

type TakeTokenReply = [number, number, number, number, number, number];
type TakeTokenCommand = (key: string, capacity: string, rate: string) => Promise<TakeTokenReply>;
type TakeTokenAndCountCommand = (
  key: string,
  countKey: string,
  capacity: string,
  rate: string,
  retentionSeconds: string,
  quota: string,
) => Promise<TakeTokenReply>;

/** The shared buckets, in Redis: one command (and one reply) a decision, the request's count included. */
export class RedisTokenBuckets implements TokenBuckets {
  private readonly takeToken: TakeTokenCommand;
  private readonly takeTokenAndCount: TakeTokenAndCountCommand;

  constructor(redis: Redis) {
    redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
    redis.defineCommand('takeTokenAndCount', { numberOfKeys: 2, lua: TAKE_TOKEN_LUA });
    const commands = redis as unknown as { takeToken: TakeTokenCommand; takeTokenAndCount: TakeTokenAndCountCommand };
    this.takeToken = commands.takeToken.bind(redis);
    this.takeTokenAndCount = commands.takeTokenAndCount.bind(redis);
  }

  async take(key: string, rate: BucketRate, count?: UsageCount): Promise<CountedDecision> {
    const { capacity, perMs } = bucketUnits(rate);
    // A counted bucket is kept in its counter's hash slot (`rl:{<the counter's tag>}:<key>`), so a
    // script may touch both on Redis Cluster; any other bucket is a slot of its own.
    const [allowed, remaining, msUntilFull, msUntilToken, now, overQuota] = count
      ? await this.takeTokenAndCount(
          `rl:{${hashTagOf(count.key)}}:${key}`,
          count.key,
          String(capacity),
          String(perMs),
          String(count.retentionSeconds),
          String(count.limit),
        )
      : await this.takeToken(`rl:{${key}}`, String(capacity), String(perMs));
    return {
      allowed: allowed === 1,
      remaining,
      msUntilFull,
      msUntilToken,
      now,
      counted: count !== undefined && overQuota !== 1,
      overQuota: overQuota === 1,
    };
  }
}

/**
 * What Redis Cluster hashes of a key: between its first `{` and the first `}` after it, when that is
 * not empty; else the whole key.
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
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

  /** Counts nothing (`counted` false), so holds no quota: the caller counts its request on its own. */
  take(key: string, rate: BucketRate): Promise<CountedDecision> {
    const now = this.clock();
    const { decision, state } = takeToken(this.buckets.get(key), rate, now);
    this.buckets.set(key, { ...state, fullAt: now + decision.msUntilFull });
    if (this.buckets.size > this.sweepAt) this.sweep(now);
    return Promise.resolve({ ...decision, counted: false, overQuota: false });
  }

  private sweep(now: number) {
    for (const [key, bucket] of this.buckets) if (bucket.fullAt <= now) this.buckets.delete(key);
    this.sweepAt = Math.max(this.sweepAbove, this.buckets.size * 2);
  }
}
