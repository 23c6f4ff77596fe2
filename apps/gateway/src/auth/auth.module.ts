import { AccessTokenVerifier } from '@acct/access-token';
import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';

import { AuthBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { AuthGuard, GATEWAY_VERIFIER } from './auth.guard';

/** Access tokens are verified locally against the auth service's keys, fetched over gRPC and cached. */
@Global()
@Module({
  providers: [
    {
      provide: GATEWAY_VERIFIER,
      inject: [GATEWAY_CONFIG, AuthBackend],
      useFactory: (config: GatewayConfig, auth: AuthBackend) =>
        new AccessTokenVerifier({
          issuer: config.TOKEN_ISSUER,
          audience: config.TOKEN_AUDIENCE,
          fetchKeys: async () => {
            const { keys } = await auth.call('getJwks', {});
            return { keys: keys.map(({ kty, kid, use, alg, crv, x, y }) => ({ kty, kid, use, alg, crv, x, y })) };
          },
        }),
    },
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [GATEWAY_VERIFIER],
})
export class AuthModule {}
