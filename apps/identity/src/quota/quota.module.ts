import { GrpcClientsModule, PLATFORM_SERVICE } from '@acct/grpc';
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
        contract: PLATFORM_SERVICE,
        address: (config) => config.PLATFORM_GRPC_ADDR,
      },
    ]),
  ],
  providers: [UsersQuotaRepository, UsersQuota],
  exports: [UsersQuota],
})
export class QuotaModule {}
