import { performance } from 'node:perf_hooks';

import { ReadinessCheck } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';

import { PlatformBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig, SERVICE_VERSION } from '../config';
import type { HealthReport } from './health-report.schema';

/** Time the gateway waits for the platform's health answer: a probe must never hang. */
const HEALTH_DEADLINE_MS = 1000;

type ComponentStatus = HealthReport['checks'][number]['status'];

/**
 * The health report (interface §2.3, contract §5): the platform's latest probe results plus the
 * gateway's own call to the platform as the `platform` component. Every report is measured: the
 * platform answers only once its first probe round is done, and a platform that does not answer
 * within the deadline is reported `down` with the time the gateway waited. The gateway asks once at
 * start and is unready (a readiness check) until that first report is in, whatever it says.
 */
@Injectable()
export class HealthReporter implements OnApplicationBootstrap, ReadinessCheck {
  readonly name = 'health_report';
  private first?: Promise<HealthReport>;
  private measured = false;

  constructor(
    private readonly platform: PlatformBackend,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  onApplicationBootstrap() {
    this.first ??= this.report().finally(() => (this.measured = true));
  }

  check(): Promise<void> {
    return this.measured ? Promise.resolve() : Promise.reject(new Error('first health report not in yet'));
  }

  async report(): Promise<HealthReport> {
    const started = performance.now();
    const base = {
      version: SERVICE_VERSION,
      region: this.config.REGION,
      uptime_seconds: Math.floor(process.uptime()),
    };
    try {
      const answer = await this.platform.call('getHealth', {}, { deadlineMs: HEALTH_DEADLINE_MS });
      const platform = { component: 'platform', status: 'up' as const, latency_ms: millisSince(started) };
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
      if (!(error instanceof DomainError) || error.code !== 'service_unavailable') throw error;
      return {
        status: 'down',
        ...base,
        checks: [{ component: 'platform', status: 'down', latency_ms: millisSince(started) }],
      };
    }
  }
}

const millisSince = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;
