import { ServiceCoreModule } from '@acct/grpc';
import { DynamicModule, Module } from '@nestjs/common';
import { Registry } from 'prom-client';

import { AUTH_CONFIG, AuthConfig } from './config';
import { AuthDatabaseReadiness, PrismaModule } from './prisma/prisma.service';

@Module({})
export class AppModule {
  static forRoot(config: AuthConfig, registry: Registry): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceCoreModule.forRoot({
          configToken: AUTH_CONFIG,
          config,
          registry,
          readiness: [AuthDatabaseReadiness],
          imports: [PrismaModule],
        }),
      ],
    };
  }
}
