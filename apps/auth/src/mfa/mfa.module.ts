import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { MfaPolicy } from './mfa.policy';
import { MfaRepository } from './mfa.repository';
import { TotpSecrets } from './totp-secrets';

/** TOTP factors: their storage and the login policy (the password grant in TokensModule uses it). */
@Module({
  imports: [PrismaModule],
  providers: [MfaRepository, TotpSecrets, MfaPolicy],
  exports: [MfaRepository, TotpSecrets, MfaPolicy],
})
export class MfaModule {}
