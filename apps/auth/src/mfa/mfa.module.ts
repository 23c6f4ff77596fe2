import { Module } from '@nestjs/common';

import { IdentityModule } from '../identity/identity.module';
import { LockoutModule } from '../lockout/lockout.module';
import { PrismaModule } from '../prisma/prisma.service';
import { CurrentPassword } from './current-password';
import { MfaGrpcController } from './mfa.grpc-controller';
import { MfaPolicy } from './mfa.policy';
import { MfaRepository } from './mfa.repository';
import { MfaService } from './mfa.service';
import { RecoveryCodeRepository } from './recovery-code.repository';
import { RecoveryCodesService } from './recovery-codes.service';
import { TotpSecrets } from './totp-secrets';

/**
 * TOTP factors and recovery codes: enrolment, confirmation and new recovery codes for the calling user
 * (identity names the account), and the code check of a password login (used by the login steps).
 * Removal (`user-admin/`) uses the repository, the code check and the password check.
 */
@Module({
  imports: [PrismaModule, IdentityModule, LockoutModule],
  controllers: [MfaGrpcController],
  providers: [
    MfaRepository,
    RecoveryCodeRepository,
    TotpSecrets,
    MfaPolicy,
    MfaService,
    RecoveryCodesService,
    CurrentPassword,
  ],
  exports: [MfaPolicy, MfaRepository, CurrentPassword],
})
export class MfaModule {}
