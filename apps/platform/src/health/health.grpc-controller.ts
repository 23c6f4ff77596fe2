import { platformV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { HealthMonitor } from './health-monitor.service';

@Controller()
@PublicRpc()
export class HealthGrpcController implements Pick<platformV1.PlatformServiceController, 'getHealth'> {
  constructor(private readonly monitor: HealthMonitor) {}

  @GrpcMethod(platformV1.PLATFORM_SERVICE_NAME, 'GetHealth')
  async getHealth(): Promise<platformV1.GetHealthResponse> {
    const { status, checks } = await this.monitor.latest();
    return {
      status,
      checks: checks.map(({ component, status, latencyMs, critical, error }) => ({
        component,
        status,
        latencyMs,
        critical,
        error: error ?? '',
      })),
    };
  }
}
