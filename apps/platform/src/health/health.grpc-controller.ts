import { platformV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Controller } from '@nestjs/common';

import { HealthMonitor } from './health-monitor.service';

@Controller()
@PublicRpc()
@platformV1.PlatformServiceControllerMethods()
export class HealthGrpcController implements Pick<platformV1.PlatformServiceController, 'getHealth'> {
  constructor(private readonly monitor: HealthMonitor) {}

  getHealth(): platformV1.GetHealthResponse {
    const { status, checks } = this.monitor.latest();
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
