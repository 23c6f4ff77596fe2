import { grpcClientOptions } from '@acct/grpc';
import { Module } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';

import { LoginAudit } from '../audit/login-audit';
import { AuthorizationCodesModule } from '../authorization/authorization-codes.module';
import { OAuthClientsModule } from '../clients/clients.module';
import { AUTH_CONFIG, AuthConfig } from '../config';
import { AccountCeilingPolicy } from '../lockout/account-ceiling.policy';
import { LockoutPolicy } from '../lockout/lockout.policy';
import { AuthMetrics } from '../metrics/auth-metrics';
import { MfaModule } from '../mfa/mfa.module';
import { MfaPolicy } from '../mfa/mfa.policy';
import { PrismaModule } from '../prisma/prisma.service';
import { RefreshModule } from '../refresh/refresh.module';
import { AccessTokenIssuer } from './access-token.issuer';
import { AuthorizationCodeGrant } from './grants/authorization-code.grant';
import { ClientCredentialsGrant } from './grants/client-credentials.grant';
import { PasswordGrant } from './grants/password.grant';
import { RefreshTokenGrant } from './grants/refresh-token.grant';
import { IDENTITY_GRPC_CLIENT, IdentityClient } from './identity.client';
import { LOGIN_POLICIES, LoginPolicy } from './login-policy';
import { PasswordLogin } from './password-login';
import { ServiceToken } from './service-token';
import { TokenService } from './token.service';

@Module({
  imports: [
    PrismaModule,
    MfaModule,
    OAuthClientsModule,
    RefreshModule,
    AuthorizationCodesModule,
    ClientsModule.registerAsync([
      {
        name: IDENTITY_GRPC_CLIENT,
        inject: [AUTH_CONFIG],
        useFactory: (config: AuthConfig) =>
          grpcClientOptions({
            package: 'identity.v1',
            protoFile: 'identity/v1/identity.proto',
            url: config.IDENTITY_GRPC_ADDR,
            protoDir: config.PROTO_DIR,
          }),
      },
    ]),
  ],
  providers: [
    AccessTokenIssuer,
    ServiceToken,
    IdentityClient,
    AuthMetrics,
    LockoutPolicy,
    AccountCeilingPolicy,
    // Contract §4, in order. MFA first: its afterSuccess must refuse before the lockouts' afterSuccess
    // resets the pair or marks the source as known. The pair lock before the ceiling: a locked pair is
    // refused without spending the account's budget.
    {
      provide: LOGIN_POLICIES,
      inject: [MfaPolicy, LockoutPolicy, AccountCeilingPolicy],
      useFactory: (mfa: MfaPolicy, lockout: LockoutPolicy, ceiling: AccountCeilingPolicy): LoginPolicy[] => [
        mfa,
        lockout,
        ceiling,
      ],
    },
    PasswordGrant,
    ClientCredentialsGrant,
    RefreshTokenGrant,
    AuthorizationCodeGrant,
    PasswordLogin,
    TokenService,
    LoginAudit,
  ],
  exports: [TokenService, LoginAudit, IdentityClient, PasswordLogin],
})
export class TokensModule {}
