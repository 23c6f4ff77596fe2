import { AccessTokenVerifier, followKeyWithdrawals, KEY_WITHDRAWAL_TOPIC } from '@acct/access-token';
import { ClockModule } from '@acct/clock';
import { ACCESS_TOKEN_VERIFIER, ServiceCoreModule } from '@acct/grpc';
import { Revocations } from '@acct/revocation';
import { DynamicModule, Module } from '@nestjs/common';
import { Registry } from 'prom-client';

import { AuditModule } from './audit/audit.module';
import { AuthorizationModule } from './authorization/authorization.module';
import { AUTH_CONFIG, AuthConfig } from './config';
import { KeysModule } from './keys/keys.module';
import { SigningKeyReadiness, SigningKeyService } from './keys/signing-key.service';
import { MfaModule } from './mfa/mfa.module';
import { AuthDatabaseReadiness, PrismaModule } from './prisma/prisma.service';
import { TokenRevocationModule } from './revocation/token-revocation.module';
import { SessionsModule } from './sessions/sessions.module';
import { TokensModule } from './tokens/tokens.module';
import { UserAdminModule } from './user-admin/user-admin.module';

@Module({})
export class AppModule {
  static forRoot(config: AuthConfig, registry: Registry): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ClockModule,
        ServiceCoreModule.forRoot({
          configToken: AUTH_CONFIG,
          config,
          registry,
          // Auth verifies with its own signing keys, read straight from its key store.
          verifier: {
            provide: ACCESS_TOKEN_VERIFIER,
            inject: [SigningKeyService, Revocations],
            useFactory: (keys: SigningKeyService, revocations: Revocations) => {
              // A withdrawal (by the CLI, or another instance) also ends this instance's signing with the key.
              void revocations.onNotice(
                KEY_WITHDRAWAL_TOPIC,
                () => void keys.reloadAfterChange().catch(() => undefined),
              );
              return followKeyWithdrawals(
                new AccessTokenVerifier({
                  issuer: config.TOKEN_ISSUER,
                  audience: config.TOKEN_AUDIENCE,
                  fetchKeys: async () => ({ keys: await keys.publishedKeys() }),
                  revocations,
                }),
                revocations,
              );
            },
          },
          readiness: [AuthDatabaseReadiness, SigningKeyReadiness],
          imports: [PrismaModule, KeysModule],
        }),
        KeysModule,
        TokensModule,
        TokenRevocationModule,
        AuthorizationModule,
        MfaModule,
        AuditModule,
        SessionsModule,
        UserAdminModule,
      ],
    };
  }
}
