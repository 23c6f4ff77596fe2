import { performance } from 'node:perf_hooks';

import { DomainError } from '@acct/problem';
import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { Public } from '../auth/access.decorators';
import { PlatformBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig, SERVICE_VERSION } from '../config';
import { ApiJsonResponse, header } from '../openapi/api.decorators';
import { healthReport } from '../openapi/resource-schemas';
import { RateLimited } from '../rate-limits/rate-limited.decorator';

/** Time the gateway waits for the platform's health answer: a probe must never hang. */
const HEALTH_DEADLINE_MS = 1000;

type ComponentStatus = 'up' | 'down';

export interface HealthReport {
  status: 'healthy' | 'degraded' | 'down';
  version: string;
  region: string;
  checks: Array<{ component: string; status: ComponentStatus; latency_ms: number }>;
  uptime_seconds: number;
}

/**
 * `GET /v2/system/health` (interface §2.3/§4.3, contract §5). The platform service answers from its
 * background probes; the gateway adds its own call to the platform as the `platform` component. A
 * `down` report is sent with 503 and the report itself as the body, so probes and people see why.
 */
@ApiTags('system')
@Controller('v2/system')
export class HealthController {
  constructor(
    private readonly platform: PlatformBackend,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Get('health')
  @Public()
  @RateLimited('system.health')
  @ApiOperation({ operationId: 'getHealth', summary: 'Health of the service and its dependencies (no token)' })
  @ApiJsonResponse(200, '`healthy`, or `degraded` (cache, object storage or message bus failing).', healthReport, {
    'Cache-Control': header('`no-store`'),
  })
  @ApiJsonResponse(
    503,
    '`down`: the database or a backend service is unreachable. The report itself is the body (application/json, not problem+json).',
    healthReport,
    { 'Cache-Control': header('`no-store`') },
  )
  async health(@Res() reply: FastifyReply) {
    const report = await this.report();
    return reply
      .status(report.status === 'down' ? 503 : 200)
      .header('Cache-Control', 'no-store')
      .header('Content-Type', 'application/json; charset=utf-8')
      .send(report);
  }

  private async report(): Promise<HealthReport> {
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
