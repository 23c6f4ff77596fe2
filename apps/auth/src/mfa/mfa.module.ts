import { Module } from '@nestjs/common';

import { IdentityModule } from '../identity/identity.module';
import { LockoutModule } from '../lockout/lockout.module';
import { PrismaModule } from '../prisma/prisma.service';
import { MfaGrpcController } from './mfa.grpc-controller';
import { MfaPolicy } from './mfa.policy';
import { MfaRepository } from './mfa.repository';
import { MfaService } from './mfa.service';
import { TotpSecrets } from './totp-secrets';

/**
 * TOTP factors: enrolment and confirmation for the calling user (identity names the account), and the
 * code check of a password login (used by the login steps).
 */
@Module({
  imports: [PrismaModule, IdentityModule, LockoutModule],
  controllers: [MfaGrpcController],
  providers: [MfaRepository, TotpSecrets, MfaPolicy, MfaService],
  exports: [MfaPolicy],
})
export class MfaModule {}
