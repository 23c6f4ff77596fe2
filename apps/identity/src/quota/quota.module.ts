import { platformV1 } from '@acct/contracts';
import { GrpcClientsModule } from '@acct/grpc';
import { Module } from '@nestjs/common';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';
import { PlatformGrpc, UsersQuota } from './users-quota';
import { UsersQuotaRepository } from './users-quota.repository';

/** The Users quota: its limit from the platform service, its count from identity's own database. */
@Module({
  imports: [
    GrpcClientsModule.register<IdentityConfig>(IDENTITY_CONFIG, [
      {
        client: PlatformGrpc,
        name: 'platform',
        package: 'platform.v1',
        protoFile: 'platform/v1/platform.proto',
        service: platformV1.PLATFORM_SERVICE_NAME,
        address: (config) => config.PLATFORM_GRPC_ADDR,
      },
    ]),
  ],
  providers: [UsersQuotaRepository, UsersQuota],
  exports: [UsersQuota],
})
export class QuotaModule {}
