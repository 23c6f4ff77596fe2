import { RATE_LIMIT_NOTICE } from '@acct/limits';
import { Controller, Get, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { ApiJsonResponse } from '../openapi/api.decorators';
import { RateLimitTiers, rateLimitTiers } from './rate-limit-tiers.schema';
import { RateLimited } from './rate-limited.decorator';
import { TierCache } from './tier-cache';

@ApiTags('system')
@Controller('v2/system')
export class RateLimitsController {
  constructor(private readonly tiers: TierCache) {}

  /** The caller's org's tiers: exactly the ones the gateway enforces for it (interface §4.4). */
  @Get('rate-limits')
  @RequireScope('system:read')
  @RateLimited('system.read')
  @ApiOperation({
    operationId: 'getRateLimits',
    summary: "The caller's org's rate-limit tier per endpoint group",
    description: 'Exactly the tiers the gateway enforces; while the platform is unreachable, the last known ones.',
  })
  @ApiJsonResponse(200, 'The tiers and a notice on 429 / Retry-After.', rateLimitTiers)
  async rateLimits(@Req() request: AuthenticatedRequest): Promise<RateLimitTiers> {
    const tiers = await this.tiers.tiersOf(request.caller.orgId);
    return {
      tiers: tiers.map((tier) => ({
        group: tier.group,
        limit: `${tier.ratePerMinute}/min`,
        burst: tier.burst,
        scope: tier.scope,
      })),
      notice: RATE_LIMIT_NOTICE,
    };
  }
}
