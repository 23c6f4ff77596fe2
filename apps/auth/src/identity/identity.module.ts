import { GrpcClientsModule, IDENTITY_SERVICE } from '@acct/grpc';
import { Module } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { IdentityClient, IdentityGrpc } from './identity.client';
import { ServiceToken } from './service-token';

/** Auth's calls into the identity service: password checks (with its own token) and GetUser. */
@Module({
  imports: [
    GrpcClientsModule.register<AuthConfig>(AUTH_CONFIG, [
      {
        client: IdentityGrpc,
        contract: IDENTITY_SERVICE,
        address: (config) => config.IDENTITY_GRPC_ADDR,
      },
    ]),
  ],
  providers: [ServiceToken, IdentityClient],
  exports: [IdentityClient],
})
export class IdentityModule {}
