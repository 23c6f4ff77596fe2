import { Module } from '@nestjs/common';

import { AuthMetricsModule } from '../metrics/metrics.module';
import { PrismaModule } from '../prisma/prisma.service';
import { DeviceCredentials } from './device-credentials';
import { KnownSourcePruner } from './known-source-pruner';
import { LockoutPolicy } from './lockout.policy';
import { LockoutRepository } from './lockout.repository';
import { LockoutReset } from './lockout-reset';
import { LoginThrottle } from './login-throttle';
import { LoginThrottleRepository } from './login-throttle.repository';
import { ThrottlePruner } from './throttle-pruner';

/** Contract §4's two brute-force limits: the (username, IP) lockout and the account-wide ceiling. */
@Module({
  imports: [PrismaModule, AuthMetricsModule],
  providers: [
    LockoutRepository,
    LockoutPolicy,
    LoginThrottleRepository,
    LoginThrottle,
    DeviceCredentials,
    LockoutReset,
    KnownSourcePruner,
    ThrottlePruner,
  ],
  exports: [LockoutPolicy, LoginThrottle, LockoutReset, KnownSourcePruner],
})
export class LockoutModule {}
