import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { Public } from '../auth/access.decorators';
import { ApiJsonResponse, header } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { healthReport } from './health-report.schema';
import { HealthReporter } from './health-reporter';

/**
 * `GET /v2/system/health` (interface §2.3/§4.3, contract §5): the report of HealthReporter. A `down`
 * report is sent with 503 and the report itself as the body, so probes and people see why.
 */
@ApiTags('system')
@Controller('v2/system')
export class HealthController {
  constructor(private readonly reporter: HealthReporter) {}

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
    const report = await this.reporter.report();
    return reply
      .status(report.status === 'down' ? 503 : 200)
      .header('Cache-Control', 'no-store')
      .header('Content-Type', 'application/json; charset=utf-8')
      .send(report);
  }
}
