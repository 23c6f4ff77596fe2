import { ClockModule } from '@acct/clock';
import { remoteVerifierProvider, ServiceCoreModule } from '@acct/grpc';
import { DynamicModule, Module } from '@nestjs/common';
import { Registry } from 'prom-client';

import { ActivationModule } from './activation/activation.module';
import { IDENTITY_CONFIG, IdentityConfig } from './config';
import { CredentialsModule } from './credentials/credentials.module';
import { PasswordsModule } from './passwords/passwords.module';
import { PrismaModule } from './prisma/prisma.module';
import { IdentityDatabaseReadiness } from './prisma/prisma.service';
import { UsersModule } from './users/users.module';

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
        ClockModule,
        UsersModule,
        PasswordsModule,
        CredentialsModule,
        ActivationModule,
      ],
    };
  }
}
