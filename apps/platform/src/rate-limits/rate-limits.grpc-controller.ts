import { platformV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { API_REQUESTS_QUOTA } from '@acct/limits';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { QuotasService } from '../quotas/quotas.service';
import { RateLimitsService } from './rate-limits.service';

@Controller()
export class RateLimitsGrpcController implements Pick<platformV1.PlatformServiceController, 'getRateLimits'> {
  constructor(
    private readonly rateLimits: RateLimitsService,
    private readonly quotas: QuotasService,
  ) {}

  /**
   * Public: limits are not secrets, and the gateway needs them before it knows who is calling. With
   * the tiers, the org's daily API requests quota, which the gateways enforce as they count requests.
   */
  @PublicRpc()
  @GrpcMethod(platformV1.PLATFORM_SERVICE_NAME, 'GetRateLimits')
  async getRateLimits(request: platformV1.GetRateLimitsRequest): Promise<platformV1.GetRateLimitsResponse> {
    const orgId = request.orgId || undefined;
    const [tiers, apiRequestsPerDay] = await Promise.all([
      this.rateLimits.tiersOf(orgId),
      orgId ? this.quotas.limitOf(orgId, API_REQUESTS_QUOTA) : 0,
    ]);
    return {
      tiers: tiers.map(({ group, ratePerMinute, burst, scope }) => ({ group, ratePerMinute, burst, scope })),
      apiRequestsPerDay,
    };
  }
}
