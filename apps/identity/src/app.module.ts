import { remoteVerifierProvider, ServiceCoreModule } from '@acct/grpc';
import { DynamicModule, Module } from '@nestjs/common';
import { Registry } from 'prom-client';

import { IDENTITY_CONFIG, IdentityConfig } from './config';
import { IdentityDatabaseReadiness, PrismaModule } from './prisma/prisma.service';

@Module({})
export class AppModule {
  static forRoot(config: IdentityConfig, registry: Registry): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceCoreModule.forRoot({
          configToken: IDENTITY_CONFIG,
          config,
          registry,
          verifier: remoteVerifierProvider(IDENTITY_CONFIG),
          readiness: [IdentityDatabaseReadiness],
          imports: [PrismaModule],
        }),
      ],
    };
  }
}
