import { RATE_LIMIT_NOTICE } from '@acct/limits';
import { Controller, Get, Req } from '@nestjs/common';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { TierCache } from './tier-cache';

/** Interface §2.4. */
export interface TierResource {
  group: string;
  limit: string;
  burst: number;
  scope: string;
}

@Controller('v2/system')
export class RateLimitsController {
  constructor(private readonly tiers: TierCache) {}

  /** The caller's org's tiers: exactly the ones the gateway enforces for it (interface §4.4). */
  @Get('rate-limits')
  @RequireScope('system:read')
  async rateLimits(@Req() request: AuthenticatedRequest): Promise<{ tiers: TierResource[]; notice: string }> {
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
