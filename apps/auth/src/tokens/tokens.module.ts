import { Module } from '@nestjs/common';

import { AuditModule } from '../audit/audit.module';
import { AuthorizationCodesModule } from '../authorization-codes/authorization-codes.module';
import { CallersModule } from '../callers/callers.module';
import { OAuthClientsModule } from '../clients/clients.module';
import { LoginModule } from '../login/login.module';
import { AuthMetricsModule } from '../metrics/metrics.module';
import { RefreshModule } from '../refresh/refresh.module';
import { AuthorizationCodeGrant } from './grants/authorization-code.grant';
import { ClientCredentialsGrant } from './grants/client-credentials.grant';
import { PasswordGrant } from './grants/password.grant';
import { RefreshTokenGrant } from './grants/refresh-token.grant';
import { TokenService } from './token.service';
import { TokensGrpcController } from './tokens.grpc-controller';

/** The token endpoint: its grants, each request recorded in the login audit and the metrics. */
@Module({
  imports: [
    CallersModule,
    LoginModule,
    OAuthClientsModule,
    RefreshModule,
    AuthorizationCodesModule,
    AuditModule,
    AuthMetricsModule,
  ],
  controllers: [TokensGrpcController],
  providers: [PasswordGrant, ClientCredentialsGrant, RefreshTokenGrant, AuthorizationCodeGrant, TokenService],
  exports: [TokenService],
})
export class TokensModule {}
