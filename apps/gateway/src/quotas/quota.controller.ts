import { QUOTA_DIMENSIONS, QuotaDimension } from '@acct/limits';
import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { PlatformBackend } from '../backends/backends.module';
import { ApiJsonResponse, ApiProblems } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { QuotaReport, quotaReport } from './quota-report.schema';

@ApiTags('system')
@Controller('v2/system')
export class QuotaController {
  constructor(private readonly platform: PlatformBackend) {}

  /** The caller's org's quotas and usage, optionally one dimension (interface §4.5). */
  @Get('quota')
  @RequireScope('system:read')
  @RateLimited('system.read')
  @ApiOperation({ operationId: 'getQuota', summary: "The caller's org's quota limits and current usage" })
  @ApiQuery({ name: 'dimension', required: false, enum: QUOTA_DIMENSIONS, description: 'Only this dimension.' })
  @ApiJsonResponse(200, "The quotas of the caller's org.", quotaReport)
  @ApiProblems('validation_failed', 'service_unavailable')
  async quota(@Req() request: AuthenticatedRequest, @Query('dimension') dimension: unknown): Promise<QuotaReport> {
    // Absent: every dimension (the platform's ''). A value given empty or more than once names no
    // dimension, and goes to the platform as one that none is, to be refused as unknown ones are.
    const named =
      dimension === undefined ? '' : typeof dimension === 'string' && dimension !== '' ? dimension : '\u0000';
    const { orgId, quotas } = await this.platform.call(
      'getQuota',
      { dimension: named, name: '' },
      { accessToken: request.accessToken },
    );
    return {
      org_id: orgId,
      quotas: quotas.map(({ dimension: quotaDimension, name, used, limit, unit }) => ({
        dimension: quotaDimension as QuotaDimension,
        name,
        used,
        limit,
        unit,
      })),
    };
  }
}
