import { Module } from '@nestjs/common';

import { TokensModule } from '../tokens/tokens.module';
import { MfaModule } from './mfa.module';
import { MfaService } from './mfa.service';

/** Enrolment and confirmation for the calling user (identity, in TokensModule, names the account). */
@Module({
  imports: [MfaModule, TokensModule],
  providers: [MfaService],
  exports: [MfaService],
})
export class MfaEnrolmentModule {}
