import { platformV1 } from '@acct/contracts';
import { callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { QuotasService } from './quotas.service';

@Controller()
export class QuotasGrpcController implements Pick<platformV1.PlatformServiceController, 'getQuota'> {
  constructor(private readonly quotas: QuotasService) {}

  @GrpcMethod(platformV1.PLATFORM_SERVICE_NAME, 'GetQuota')
  async getQuota(request: platformV1.GetQuotaRequest, metadata?: Metadata): Promise<platformV1.GetQuotaResponse> {
    const { orgId, quotas } = await this.quotas.quotasFor(callerOf(metadata), request.dimension, request.name);
    return { orgId, quotas };
  }
}
