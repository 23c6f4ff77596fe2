import { authV1, identityV1, platformV1 } from '@acct/contracts';
import { AUTH_SERVICE, GrpcClient, GrpcClientsModule, IDENTITY_SERVICE, PLATFORM_SERVICE } from '@acct/grpc';
import { Global, Module } from '@nestjs/common';

import { GATEWAY_CONFIG, GatewayConfig } from '../config';

export class IdentityBackend extends GrpcClient<identityV1.IdentityServiceClient> {}
export class AuthBackend extends GrpcClient<authV1.AuthServiceClient> {}
export class PlatformBackend extends GrpcClient<platformV1.PlatformServiceClient> {}

/** gRPC clients of the three backend services (the typed client every service uses, `@acct/grpc`). */
@Global()
@Module({
  imports: [
    GrpcClientsModule.register<GatewayConfig>(GATEWAY_CONFIG, [
      {
        client: IdentityBackend,
        contract: IDENTITY_SERVICE,
        address: (config) => config.IDENTITY_GRPC_ADDR,
      },
      {
        client: AuthBackend,
        contract: AUTH_SERVICE,
        address: (config) => config.AUTH_GRPC_ADDR,
      },
      {
        client: PlatformBackend,
        contract: PLATFORM_SERVICE,
        address: (config) => config.PLATFORM_GRPC_ADDR,
      },
    ]),
  ],
  exports: [GrpcClientsModule],
})
export class BackendsModule {}
