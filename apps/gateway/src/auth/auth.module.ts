import { AccessTokenVerifier, followKeyWithdrawals } from '@acct/access-token';
import { toJwks } from '@acct/grpc';
import { Revocations } from '@acct/revocation';
import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';

import { AuthBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { AccessTokenStrategy, GATEWAY_VERIFIER } from './access-token.strategy';
import { AuthGuard } from './auth.guard';
import { AuthenticateHook } from './authenticate.hook';

/**
 * Access tokens are verified locally against the auth service's keys, fetched over gRPC and cached:
 * once per request by the authenticate hook through the passport strategy; the guard then decides
 * per route. Every verification also checks the revocations in memory (RevocationModule, imported by
 * the GatewayModule), and a signing key auth withdrew is refused as soon as its notice arrives.
 */
@Global()
@Module({
  providers: [
    {
      provide: GATEWAY_VERIFIER,
      inject: [GATEWAY_CONFIG, AuthBackend, Revocations],
      useFactory: (config: GatewayConfig, auth: AuthBackend, revocations: Revocations) =>
        followKeyWithdrawals(
          new AccessTokenVerifier({
            issuer: config.TOKEN_ISSUER,
            audience: config.TOKEN_AUDIENCE,
            fetchKeys: async () => toJwks(await auth.call('getJwks', {})),
            revocations,
          }),
          revocations,
        ),
    },
    AccessTokenStrategy,
    AuthenticateHook,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [GATEWAY_VERIFIER, AuthenticateHook],
})
export class AuthModule {}
