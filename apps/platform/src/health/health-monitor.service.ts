import { performance } from 'node:perf_hooks';

import { ReadinessCheck, withTimeout } from '@acct/observability';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';
import { ComponentResult, overallStatus } from './health-status';
import { Probe, PROBES } from './probes';

/**
 * Probes every dependency in the background on an interval, each with a timeout, and keeps the
 * latest results; `GetHealth` answers from them and never fans out per request. Nothing is reported
 * before it was measured: until the first round is done the process is unready (a readiness check)
 * and `latest()` waits for that round (at most HEALTH_PROBE_TIMEOUT_MS, every probe has that timeout).
 */
@Injectable()
export class HealthMonitor implements OnApplicationBootstrap, OnModuleDestroy, ReadinessCheck {
  readonly name = 'health_probes';
  private readonly logger = new Logger(HealthMonitor.name);
  private results?: ComponentResult[];
  private firstRound?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    @Inject(PROBES) private readonly probes: Probe[],
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  async onApplicationBootstrap() {
    await this.measured();
    this.timer = setInterval(() => void this.probeAll(), this.config.HEALTH_PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops probing and closes every probe's connections (the probes are this module's, not Nest's providers). */
  async onModuleDestroy() {
    clearInterval(this.timer);
    await Promise.allSettled(this.probes.map(async (probe) => probe.close?.()));
  }

  /** Unready until the first round of probes is done (it is started if it was not yet). */
  check(): Promise<void> {
    void this.measured();
    return this.results ? Promise.resolve() : Promise.reject(new Error('first health probes still running'));
  }

  /** The latest results, once there are any. */
  async latest() {
    const results = await this.measured();
    return { status: overallStatus(results), checks: results };
  }

  private async measured(): Promise<ComponentResult[]> {
    this.firstRound ??= this.probeAll();
    await this.firstRound;
    return this.results!;
  }

  /** One round of probes; a round still running is joined rather than overlapped. */
  probeAll(): Promise<void> {
    this.running ??= Promise.all(this.probes.map((probe) => this.probe(probe)))
      .then((results) => this.record(results))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private record(results: ComponentResult[]) {
    for (const result of results) {
      const previous = this.results?.find((known) => known.component === result.component);
      if (previous?.status !== result.status) {
        const log = result.status === 'up' ? this.logger.log.bind(this.logger) : this.logger.warn.bind(this.logger);
        log(`${result.component} is ${result.status}${result.error ? `: ${result.error}` : ''}`);
      }
    }
    this.results = results;
  }

  private async probe(probe: Probe): Promise<ComponentResult> {
    const timeoutMs = this.config.HEALTH_PROBE_TIMEOUT_MS;
    const started = performance.now();
    try {
      await withTimeout(probe.run(timeoutMs), timeoutMs, `no answer within ${timeoutMs} ms`);
      return { component: probe.component, critical: probe.critical, status: 'up', latencyMs: elapsed(started) };
    } catch (error) {
      return {
        component: probe.component,
        critical: probe.critical,
        status: 'down',
        latencyMs: elapsed(started),
        error: error instanceof Error ? error.message || error.name : String(error),
      };
    }
  }
}

/** Milliseconds since `started`, to the microsecond. */
const elapsed = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;
