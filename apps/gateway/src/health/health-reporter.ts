import { performance } from 'node:perf_hooks';

import { ReadinessCheck } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';

import { PlatformBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig, SERVICE_VERSION } from '../config';
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

  constructor(
    private readonly platform: PlatformBackend,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
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
    try {
      const answer = await this.platform.call('getHealth', {}, { deadlineMs: HEALTH_DEADLINE_MS });
      const platform = { component: 'platform', status: 'up' as const, latency_ms: millisSince(started) };
      this.probed = [...new Set([...PLATFORM_PROBED, ...answer.checks.map((check) => check.component)])];
      return {
        status: answer.status as HealthReport['status'],
        ...base,
        checks: [
          ...answer.checks.map((check) => ({
            component: check.component,
            status: check.status as ComponentStatus,
            latency_ms: check.latencyMs,
          })),
          platform,
        ],
      };
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
}

const millisSince = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;
