import { ClockModule } from '@acct/clock';
import { remoteVerifierProvider, ServiceCoreModule } from '@acct/grpc';
import { DynamicModule, Module } from '@nestjs/common';
import { Registry } from 'prom-client';

import { PLATFORM_CONFIG, PlatformConfig } from './config';
import { HealthModule } from './health/health.module';
import { HealthMonitor } from './health/health-monitor.service';
import { PrismaModule } from './prisma/prisma.module';
import { PlatformDatabaseReadiness } from './prisma/prisma.service';
import { QuotasModule } from './quotas/quotas.module';
import { RateLimitsModule } from './rate-limits/rate-limits.module';

@Module({})
export class AppModule {
  static forRoot(config: PlatformConfig, registry: Registry): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ClockModule,
        ServiceCoreModule.forRoot({
          configToken: PLATFORM_CONFIG,
          config,
          registry,
          verifier: remoteVerifierProvider(PLATFORM_CONFIG),
          readiness: [PlatformDatabaseReadiness, HealthMonitor],
          imports: [PrismaModule, HealthModule],
        }),
        HealthModule,
        RateLimitsModule,
        QuotasModule,
      ],
    };
  }
}
