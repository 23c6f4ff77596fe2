import { authV1, identityV1, platformV1 } from '@acct/contracts';
import { GrpcClient, GrpcClientsModule } from '@acct/grpc';
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
        name: 'identity',
        package: 'identity.v1',
        protoFile: 'identity/v1/identity.proto',
        service: identityV1.IDENTITY_SERVICE_NAME,
        address: (config) => config.IDENTITY_GRPC_ADDR,
      },
      {
        client: AuthBackend,
        name: 'auth',
        package: 'auth.v1',
        protoFile: 'auth/v1/auth.proto',
        service: authV1.AUTH_SERVICE_NAME,
        address: (config) => config.AUTH_GRPC_ADDR,
      },
      {
        client: PlatformBackend,
        name: 'platform',
        package: 'platform.v1',
        protoFile: 'platform/v1/platform.proto',
        service: platformV1.PLATFORM_SERVICE_NAME,
        address: (config) => config.PLATFORM_GRPC_ADDR,
      },
    ]),
  ],
  exports: [GrpcClientsModule],
})
export class BackendsModule {}
