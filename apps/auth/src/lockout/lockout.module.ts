import { Module } from '@nestjs/common';

import { AuthMetricsModule } from '../metrics/metrics.module';
import { PrismaModule } from '../prisma/prisma.service';
import { AccountCeilingPolicy } from './account-ceiling.policy';
import { AccountCeilingRepository } from './account-ceiling.repository';
import { DeviceCredentials } from './device-credentials';
import { KnownSourcePruner } from './known-source-pruner';
import { LockoutPolicy } from './lockout.policy';
import { LockoutRepository } from './lockout.repository';
import { LockoutReset } from './lockout-reset';

/** Contract §4's two brute-force limits: the (username, IP) lockout and the account-wide ceiling. */
@Module({
  imports: [PrismaModule, AuthMetricsModule],
  providers: [
    LockoutRepository,
    LockoutPolicy,
    AccountCeilingRepository,
    AccountCeilingPolicy,
    DeviceCredentials,
    LockoutReset,
    KnownSourcePruner,
  ],
  exports: [LockoutPolicy, AccountCeilingPolicy, LockoutReset, KnownSourcePruner],
})
export class LockoutModule {}
