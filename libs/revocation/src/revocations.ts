import { drainConnection } from '@acct/events';
import { valueWithin, withTimeout } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { failFastRedis } from '@acct/redis';
import Redis from 'ioredis';
import { connect, Events, NatsConnection } from 'nats';

import { FIRST_ID, RedisRevocationLog } from './redis-revocation-log';
import { inWriteBatches, parseBatch, RevocableToken, Revocation } from './revocation';
import { RevocationSet } from './revocation-set';

export interface RevocationsOptions {
  redisUrl: string;
  /** REDIS_KEY_PREFIX: also keeps the NATS subject of one installation apart from another's. */
  keyPrefix?: string;
  natsUrl: string;
  /** This process, for NATS' monitoring. */
  name: string;
  /** How often the set is caught up from Redis, repairing a missed notice (ms). */
  resyncIntervalMs?: number;
  /** The longest an access token lives (s): a family's or a subject's entry lasts this long. */
  maxTokenLifetimeSeconds?: number;
  /** How long one Redis read or write may take (ms). */
  timeoutMs?: number;
  now?: () => number;
  logger?: { log(message: string): void; warn(message: string): void };
}

/** Verifiers accept a token up to 5 s past `exp`; clocks of processes differ a little too. */
const MARGIN_MS = 60_000;
const SWEEP_INTERVAL_MS = 60_000;

/** The NATS subject revocations are announced on (core NATS: a notice, not a durable event). */
export function noticeSubject(keyPrefix = ''): string {
  return `revocation.v1.${keyPrefix ? Buffer.from(keyPrefix).toString('hex') : 'default'}`;
}

/**
 * Announces one notice of `topic` (as `Revocations.announce` does) from a process that holds no
 * Revocations (a CLI): connects, publishes, flushes, closes. Best effort, like every notice: each step
 * waits at most `timeoutMs`, so a NATS that accepts the connection and then hangs fails the notice
 * instead of holding the CLI, whose change is already made, for ever.
 */
export async function announceOnce(
  options: { natsUrl: string; keyPrefix?: string; name: string; timeoutMs?: number },
  topic: string,
  message: string,
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 1000;
  const nats = await connect({ servers: options.natsUrl, name: options.name, timeout: timeoutMs });
  try {
    nats.publish(`${noticeSubject(options.keyPrefix)}.${topic}`, message);
    await withTimeout(nats.flush(), timeoutMs, 'NATS did not confirm the notice');
  } finally {
    await drainConnection(nats, timeoutMs);
  }
}

/** What a revocation revokes: one key per token, session or subject. */
function unstoredKey(revocation: Revocation): string {
  switch (revocation.kind) {
    case 'token':
      return JSON.stringify(['token', revocation.jti]);
    case 'session':
      return JSON.stringify(['session', revocation.sid]);
    case 'subject':
      return JSON.stringify(['subject', revocation.orgId, revocation.sub]);
  }
}

/** Two revocations of the same thing as one (as RevocationSet.add keeps them). */
function merged(known: Revocation, added: Revocation): Revocation {
  const expiresAt = Math.max(known.expiresAt, added.expiresAt);
  if (known.kind === 'subject' && added.kind === 'subject') {
    return { ...known, before: Math.max(known.before, added.before), expiresAt };
  }
  return { ...known, expiresAt };
}

const notLoaded = () =>
  new DomainError('service_unavailable', 'The revocation list is not loaded yet; retry shortly.', { retryAfter: 1 });

/**
 * The one token revocation mechanism. Every process holds a RevocationSet in memory and checks tokens
 * against it with no I/O. A revocation is added to the caller's own set, announced on NATS (every
 * process adds it at once) and written to a Redis stream; each process also catches up from that
 * stream every `resyncIntervalMs` (only the entries newer than the last it read), which repairs a
 * missed notice, and reads it whole when it starts or reconnects to Redis. Until the first read
 * succeeds the process is not ready and refuses tokens (503), rather than accept revoked ones.
 */
export class Revocations {
  readonly set: RevocationSet;
  private readonly redis: Redis;
  private readonly log: RedisRevocationLog;
  private readonly subject: string;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly lifetimeMs: number;
  private nats?: NatsConnection;
  /** The stream id caught up to; undefined until the first full read. */
  private lastId?: string;
  /** When the last read from Redis succeeded (`now()`). */
  private caughtUpAt?: number;
  private fullReadNeeded = true;
  private syncing?: Promise<void>;
  private failing = false;
  private natsFailing = false;
  private lastSweep = 0;
  /**
   * Revocations Redis could not store when they were made (their caller was told so, or logged it):
   * the next catch-up that reaches Redis stores them, so processes started later know them too. Each
   * is kept once, by what it revokes (keepUnstored): a caller retrying the same one (a redelivered
   * session-ending event, a client's retry of its 503) through a long outage added a copy per attempt,
   * memory and all.
   */
  private readonly unstored = new Map<string, Revocation>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Handlers of other caches' invalidation notices, by topic (see `onNotice`). */
  private readonly noticeHandlers = new Map<string, Array<(message: string) => void>>();

  constructor(private readonly options: RevocationsOptions) {
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.lifetimeMs = (options.maxTokenLifetimeSeconds ?? 7200) * 1000;
    this.set = new RevocationSet(this.now);
    this.subject = noticeSubject(options.keyPrefix);
    // Its failures are reported by the failing reads and writes.
    this.redis = failFastRedis(options.redisUrl, {
      keyPrefix: options.keyPrefix,
      commandTimeoutMs: this.timeoutMs,
      connectTimeoutMs: this.timeoutMs,
      retryStepMs: 100,
    });
    this.log = new RedisRevocationLog(this.redis, this.lifetimeMs + MARGIN_MS, this.now);
  }

  /**
   * Connects, reads the whole set (waiting up to the timeout for Redis) and starts the periodic
   * catch-up. Resolves either way: without Redis the process stays not ready until a read succeeds.
   */
  async start(): Promise<void> {
    const listening = this.listen().catch(() => undefined);
    // Every (re)connection reads the whole stream: entries may have been written while away.
    this.redis.on('ready', () => {
      this.fullReadNeeded = true;
      void this.resync();
    });
    await this.untilRedisReady().catch(() => undefined);
    await this.resync();
    // Subscribed before it serves, unless NATS is away (then the resyncs alone keep it current).
    await valueWithin(listening, this.timeoutMs, undefined);
    this.timer = setInterval(() => void this.resync(), this.options.resyncIntervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.syncing;
    await drainConnection(this.nats);
    this.redis.disconnect();
  }

  /** Whether the set was read from Redis at least once (the process may take traffic). */
  get loaded(): boolean {
    return this.lastId !== undefined;
  }

  /**
   * Milliseconds since the set last caught up from Redis; undefined before the first read. Past the
   * resync interval, a notice this process missed (NATS away) is not repaired: it may accept a token
   * revoked meanwhile (`revocations_sync_age_seconds`, docs/metrics.md).
   */
  caughtUpAgoMs(): number | undefined {
    return this.caughtUpAt === undefined ? undefined : this.now() - this.caughtUpAt;
  }

  /** The check of the request path: in memory. Refuses (503) while the set was never loaded. */
  isRevoked(token: RevocableToken): boolean {
    if (!this.loaded) throw notLoaded();
    return this.set.isRevoked(token);
  }

  /** One access token, until it expires (`expiresAt` in ms). */
  revokeToken(jti: string, expiresAt: number): Promise<void> {
    return this.revoke([{ kind: 'token', jti, expiresAt: expiresAt + MARGIN_MS }]);
  }

  /** Every access token issued from these refresh families (their `sid`). */
  revokeSessions(sids: readonly string[]): Promise<void> {
    const expiresAt = this.now() + this.lifetimeMs + MARGIN_MS;
    return this.revoke(sids.map((sid) => ({ kind: 'session' as const, sid, expiresAt })));
  }

  /** Every token of `sub` in `orgId` issued before `before` (ms), e.g. a password change. */
  revokeSubject(orgId: string, sub: string, before: number): Promise<void> {
    return this.revoke([{ kind: 'subject', orgId, sub, before, expiresAt: before + this.lifetimeMs + MARGIN_MS }]);
  }

  /**
   * Adds the revocations here, announces them to every process and stores them in Redis. When Redis
   * cannot store them it throws `service_unavailable` (the caller must not claim success): processes
   * that got the notice keep them, and this one stores them once Redis answers (unless it stops
   * first), so that a process that starts later knows them too.
   */
  async revoke(revocations: Revocation[]): Promise<void> {
    if (revocations.length === 0) return;
    this.set.addAll(revocations);
    for (const batch of inWriteBatches(revocations)) this.nats?.publish(this.subject, JSON.stringify(batch));
    try {
      await this.store(revocations);
    } catch (error) {
      this.options.logger?.warn(`revocation not stored: ${(error as Error).message}; stored once Redis answers`);
      this.keepUnstored(revocations);
      throw new DomainError('service_unavailable', 'The revocation could not be stored; retry.', { retryAfter: 1 });
    }
  }

  /**
   * Announces an invalidation notice of another in-memory cache (`topic`, e.g. `clients`) to every
   * process on the same NATS connection and subject family as the revocations. A notice is best
   * effort (lost while NATS is away): a cache that relies on it keeps its entries for a short TTL too.
   */
  announce(topic: string, message: string): void {
    this.nats?.publish(`${this.subject}.${topic}`, message);
  }

  /**
   * Calls `handler` with every notice of `topic` (announced by any process, this one included) from
   * the moment the server has the subscription, which the returned promise says: a notice published
   * before then, by another connection, is not delivered. It resolves at once before NATS is connected
   * (`start` subscribes every topic before it resolves), and never rejects.
   */
  onNotice(topic: string, handler: (message: string) => void): Promise<void> {
    const handlers = this.noticeHandlers.get(topic);
    if (handlers) handlers.push(handler);
    else {
      this.noticeHandlers.set(topic, [handler]);
      if (this.nats) this.subscribeNotices(this.nats, topic);
    }
    return this.nats ? this.nats.flush().catch(() => undefined) : Promise.resolve();
  }

  private subscribeNotices(nats: NatsConnection, topic: string): void {
    nats.subscribe(`${this.subject}.${topic}`, {
      callback: (error, message) => {
        if (error) return;
        for (const handler of this.noticeHandlers.get(topic) ?? []) handler(message.string());
      },
    });
  }

  /** Catches up from Redis (one read at a time); a failure is logged once and retried next interval. */
  resync(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.syncing ??= this.catchUp().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async catchUp(): Promise<void> {
    const full = this.fullReadNeeded || this.lastId === undefined;
    try {
      const page = await withTimeout(
        this.log.readAfter(full ? FIRST_ID : this.lastId!),
        this.timeoutMs * 5,
        'Redis did not answer',
      );
      this.set.addAll(page.revocations);
      this.lastId = page.lastId;
      this.caughtUpAt = this.now();
      if (full) this.fullReadNeeded = false;
      if (this.failing) this.options.logger?.log('revocations: caught up from Redis again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        this.options.logger?.warn(
          `revocations: cannot read Redis (${(error as Error).message}); using what is known, retrying`,
        );
      }
      this.failing = true;
    }
    if (!this.failing && this.unstored.size > 0) await this.storeUnstored();
    if (this.now() - this.lastSweep > SWEEP_INTERVAL_MS) {
      this.set.sweep();
      for (const [key, revocation] of this.unstored) if (revocation.expiresAt <= this.now()) this.unstored.delete(key);
      this.lastSweep = this.now();
    }
  }

  /** Appends revocations to Redis's log, within the timeout. */
  private store(revocations: Revocation[]): Promise<unknown> {
    return withTimeout(this.log.append(revocations), this.timeoutMs, 'Redis did not answer');
  }

  /** Stores the revocations Redis could not take when they were made; those it still cannot wait. */
  private async storeUnstored(): Promise<void> {
    const pending = [...this.unstored.values()].filter((revocation) => revocation.expiresAt > this.now());
    this.unstored.clear();
    if (pending.length === 0) return;
    try {
      await this.store(pending);
      this.options.logger?.log(`revocations: stored ${pending.length} that Redis could not take before`);
    } catch {
      this.keepUnstored(pending);
    }
  }

  /**
   * Keeps each revocation once by what it revokes, merged as the set merges it (the later end, the
   * later `before`): a session's or a token's entry is timed from the attempt that made it, so keyed by
   * its whole value every retry of the same end added a copy.
   */
  private keepUnstored(revocations: readonly Revocation[]): void {
    for (const revocation of revocations) {
      const key = unstoredKey(revocation);
      const known = this.unstored.get(key);
      this.unstored.set(key, known ? merged(known, revocation) : revocation);
    }
  }

  private untilRedisReady(): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return withTimeout(
      new Promise<void>((resolve) => this.redis.once('ready', () => resolve())),
      this.timeoutMs * 3,
      'Redis is not reachable',
    );
  }

  /**
   * Subscribes to the notices, connecting in the background (retrying until stopped, then reconnecting
   * forever); resolves once the subscription is registered with the server.
   */
  private async listen(): Promise<void> {
    while (!this.stopped && !this.nats) {
      try {
        this.nats = await connect({
          servers: this.options.natsUrl,
          name: `${this.options.name}-revocations`,
          reconnect: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
          timeout: this.timeoutMs,
        });
      } catch (error) {
        if (!this.natsFailing) this.options.logger?.warn(`revocations: NATS: ${(error as Error).message}; retrying`);
        this.natsFailing = true;
        await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      }
    }
    const nats = this.nats;
    if (!nats) return;
    if (this.stopped) return void (await nats.close());
    this.natsFailing = false;
    nats.subscribe(this.subject, {
      callback: (error, message) => {
        const batch = error ? undefined : parseBatch(message.string());
        if (batch) this.set.addAll(batch);
      },
    });
    for (const topic of this.noticeHandlers.keys()) this.subscribeNotices(nats, topic);
    await nats.flush();
    void this.catchUpAfterReconnects(nats);
  }

  /** Notices sent while disconnected are lost: catch up from Redis at once after a reconnect. */
  private async catchUpAfterReconnects(nats: NatsConnection): Promise<void> {
    for await (const status of nats.status()) if (status.type === Events.Reconnect) void this.resync();
  }
}
