import { platformV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { RateLimitsService } from './rate-limits.service';

@Controller()
export class RateLimitsGrpcController implements Pick<platformV1.PlatformServiceController, 'getRateLimits'> {
  constructor(private readonly rateLimits: RateLimitsService) {}

  /** Public: limits are not secrets, and the gateway needs them before it knows who is calling. */
  @PublicRpc()
  @GrpcMethod(platformV1.PLATFORM_SERVICE_NAME, 'GetRateLimits')
  async getRateLimits(request: platformV1.GetRateLimitsRequest): Promise<platformV1.GetRateLimitsResponse> {
    const tiers = await this.rateLimits.tiersOf(request.orgId || undefined);
    return { tiers: tiers.map(({ group, ratePerMinute, burst, scope }) => ({ group, ratePerMinute, burst, scope })) };
  }
}
