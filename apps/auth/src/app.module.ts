import { AccessTokenVerifier } from '@acct/access-token';
import { ACCESS_TOKEN_VERIFIER, ServiceCoreModule } from '@acct/grpc';
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
          // Auth verifies with its own signing keys.
          verifier: {
            provide: ACCESS_TOKEN_VERIFIER,
            useFactory: () =>
              new AccessTokenVerifier({
                issuer: config.TOKEN_ISSUER,
                audience: config.TOKEN_AUDIENCE,
                fetchKeys: () => Promise.resolve({ keys: [] }),
              }),
          },
          readiness: [AuthDatabaseReadiness],
          imports: [PrismaModule],
        }),
      ],
    };
  }
}
