import { Module } from '@nestjs/common';

import { OAuthClientsModule } from '../clients/clients.module';
import { TokensModule } from '../tokens/tokens.module';
import { AuthorizationService } from './authorization.service';
import { AuthorizationCodesModule } from './authorization-codes.module';
import { SignInSeals } from './sign-in-seals';

/** The authorization endpoint's checks and the login page's sign-in (contract §6). */
@Module({
  imports: [OAuthClientsModule, TokensModule, AuthorizationCodesModule],
  providers: [AuthorizationService, SignInSeals],
  exports: [AuthorizationService],
})
export class AuthorizationModule {}
