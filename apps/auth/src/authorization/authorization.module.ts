import { Module } from '@nestjs/common';

import { OAuthClientsModule } from '../clients/clients.module';
import { TokensModule } from '../tokens/tokens.module';
import { AuthorizationService } from './authorization.service';
import { AuthorizationCodesModule } from './authorization-codes.module';
import { MfaTickets } from './mfa-ticket';

/** The authorization endpoint's checks and the login page's sign-in (contract §6). */
@Module({
  imports: [OAuthClientsModule, TokensModule, AuthorizationCodesModule],
  providers: [AuthorizationService, MfaTickets],
  exports: [AuthorizationService],
})
export class AuthorizationModule {}
