import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { RefreshModule } from '../refresh/refresh.module';
import { AuthorizationCodeRepository } from './authorization-code.repository';
import { AuthorizationCodes } from './authorization-codes';

/** Authorization codes: issued by the login page (AuthorizationModule), redeemed by the token endpoint. */
@Module({
  imports: [PrismaModule, RefreshModule],
  providers: [AuthorizationCodeRepository, AuthorizationCodes],
  exports: [AuthorizationCodes],
})
export class AuthorizationCodesModule {}
