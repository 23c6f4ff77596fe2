import { performance } from 'node:perf_hooks';

import { ReadinessCheck, withTimeout } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import type Redis from 'ioredis';

import { PlatformBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig, SERVICE_VERSION } from '../config';
import { GATEWAY_REDIS } from '../rate-limits/gateway-redis';
import type { HealthReport } from './health-report.schema';

/** Time the gateway waits for the platform's health answer: a probe must never hang. */
const HEALTH_DEADLINE_MS = 1000;

/**
 * What the platform probes (contract §5: at least database, cache and object_storage, with the message
 * bus and each backend service), named in a report the gateway makes while the platform does not
 * answer, with any other component the platform's latest answer named.
 */
const PLATFORM_PROBED = ['database', 'cache', 'object_storage', 'message_bus', 'identity', 'auth'];

type ComponentStatus = HealthReport['checks'][number]['status'];

/** The key the gateway's own cache probe writes (as the platform's does), and how long it is kept. */
const CACHE_PROBE_KEY = 'health:gateway-cache-probe';
const CACHE_PROBE_KEY_TTL_MS = 10_000;

/**
 * The health report (interface §2.3, contract §5): the platform's latest probe results plus the
 * gateway's own call to the platform as the `platform` component. Every report is measured: the
 * platform answers only once its first probe round is done, and a platform that does not answer
 * within the deadline (or answers with an error) is reported `down` with the time the gateway waited, every component it probes
 * `down` with it (nothing measured them, and the report still names them all). The gateway asks once at
 * start and is unready (a readiness check) until that first report is in, whatever it says.
 *
 * Requests are answered from memory: the report is measured again in the background every
 * HEALTH_REPORT_REFRESH_MS (below the platform's probe interval), so no request waits for the
 * platform. Only while the channel to the platform is not connected (it stopped or crashed: the
 * gateway knows at once from the GOAWAY or the closed socket) does a request measure the report
 * itself, so a platform that is gone is reported `down` at once, not one refresh later. Concurrent
 * measurements are one call.
 */
@Injectable()
export class HealthReporter implements OnApplicationBootstrap, OnApplicationShutdown, ReadinessCheck {
  readonly name = 'health_report';
  private readonly logger = new Logger('health');
  private latest?: HealthReport;
  private measuring?: Promise<HealthReport>;
  private timer?: NodeJS.Timeout;
  private probed = PLATFORM_PROBED;

  /** Whether the gateway's Redis connection was ever ready (until then, a probe waits for it). */
  private cacheReady?: Promise<void>;

  /**
   * `redis` is the rate limiter's own connection (rate-limits.module.ts), with its command timeout
   * (RATE_LIMIT_REDIS_TIMEOUT_MS): contract §2 has health `degraded` while the gateway limits with its
   * in-process buckets, which it does whenever that connection fails or is slower than its timeout.
   * The platform's probe cannot see that (another connection, from another host, with a 1 s
   * timeout), so the report says the cache is `up` only when both answer.
   */
  constructor(
    private readonly platform: PlatformBackend,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() @Inject(GATEWAY_REDIS) private readonly redis?: Redis,
  ) {}

  onApplicationBootstrap() {
    if (this.timer) return;
    void this.measure().catch(() => undefined);
    this.timer = setInterval(() => void this.measure().catch(() => undefined), this.config.HEALTH_REPORT_REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown() {
    clearInterval(this.timer);
  }

  check(): Promise<void> {
    return this.latest ? Promise.resolve() : Promise.reject(new Error('first health report not in yet'));
  }

  /** The latest report (uptime as of now), or a fresh one while the platform is not connected. */
  async report(): Promise<HealthReport> {
    if (this.latest && this.platform.connected()) {
      return { ...this.latest, uptime_seconds: Math.floor(process.uptime()) };
    }
    return this.measure();
  }

  private measure(): Promise<HealthReport> {
    this.measuring ??= this.ask()
      .then((report) => (this.latest = report))
      .finally(() => (this.measuring = undefined));
    return this.measuring;
  }

  private async ask(): Promise<HealthReport> {
    const started = performance.now();
    const base = {
      version: SERVICE_VERSION,
      region: this.config.REGION,
      uptime_seconds: Math.floor(process.uptime()),
    };
    const ownCache = this.probeCache();
    try {
      const answer = await this.platform.call('getHealth', {}, { deadlineMs: HEALTH_DEADLINE_MS });
      const platform = { component: 'platform', status: 'up' as const, latency_ms: millisSince(started) };
      this.probed = [...new Set([...PLATFORM_PROBED, ...answer.checks.map((check) => check.component)])];
      const checks = answer.checks.map((check) => ({
        component: check.component,
        status: check.status as ComponentStatus,
        latency_ms: check.latencyMs,
      }));
      let status = answer.status as HealthReport['status'];
      const cache = await ownCache;
      if (cache) {
        // The gateway's buckets are its own while its Redis fails: the cache is down for this instance.
        const reported = checks.find((check) => check.component === 'cache');
        if (reported) Object.assign(reported, cache);
        else checks.push({ component: 'cache', ...cache });
        if (status === 'healthy') status = 'degraded';
      }
      return { status, ...base, checks: [...checks, platform] };
    } catch (error) {
      // Any other refusal (an internal error, the gateway's own token refused) is no answer either: the
      // report says so rather than going stale, or never coming in at start (the gateway never ready).
      if (!(error instanceof DomainError) || error.code !== 'service_unavailable') {
        this.logger.warn(
          `the platform's health answer failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const latency_ms = millisSince(started);
      return {
        status: 'down',
        ...base,
        checks: [...this.probed, 'platform'].map((component) => ({ component, status: 'down' as const, latency_ms })),
      };
    }
  }

  /**
   * A write on the gateway's own Redis connection (a write, as the platform's probe: a replica answers
   * PING and refuses every bucket): undefined when it succeeds, else the `down` check. The first probe
   * waits for the first connection (within the health deadline), so a Redis that is there is not
   * reported down at start; later ones fail at once while it is away, as the buckets' commands do.
   */
  private async probeCache(): Promise<{ status: 'down'; latency_ms: number } | undefined> {
    const redis = this.redis;
    if (!redis) return undefined;
    const started = performance.now();
    try {
      this.cacheReady ??= withTimeout(firstReady(redis), HEALTH_DEADLINE_MS, 'not connected').catch(() => undefined);
      await this.cacheReady;
      await redis.set(CACHE_PROBE_KEY, String(Date.now()), 'PX', CACHE_PROBE_KEY_TTL_MS);
      return undefined;
    } catch {
      return { status: 'down', latency_ms: millisSince(started) };
    }
  }
}

/** Resolves once `redis` is (or was) ready. */
function firstReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => redis.once('ready', () => resolve()));
}

const millisSince = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;
