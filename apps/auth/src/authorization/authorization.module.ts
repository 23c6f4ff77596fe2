import { Module } from '@nestjs/common';

import { AuthorizationCodesModule } from '../authorization-codes/authorization-codes.module';
import { CallersModule } from '../callers/callers.module';
import { OAuthClientsModule } from '../clients/clients.module';
import { LoginModule } from '../login/login.module';
import { TokensModule } from '../tokens/tokens.module';
import { AuthorizationGrpcController } from './authorization.grpc-controller';
import { AuthorizationService } from './authorization.service';
import { SignInSeals } from './sign-in-seals';

/** The authorization endpoint's checks and the login page's sign-in (contract §6). */
@Module({
  imports: [CallersModule, OAuthClientsModule, TokensModule, LoginModule, AuthorizationCodesModule],
  controllers: [AuthorizationGrpcController],
  providers: [AuthorizationService, SignInSeals],
  exports: [AuthorizationService],
})
export class AuthorizationModule {}
