import { authV1, identityV1, platformV1 } from '@acct/contracts';
import { grpcClientOptions } from '@acct/grpc';
import { Global, Module, Provider } from '@nestjs/common';
import { ClientGrpc, ClientsModule } from '@nestjs/microservices';

import { GATEWAY_CONFIG, GatewayConfig, loadGatewayConfig } from '../config';
import { GrpcBackend } from './grpc-backend';

export class IdentityBackend extends GrpcBackend<identityV1.IdentityServiceClient> {}
export class AuthBackend extends GrpcBackend<authV1.AuthServiceClient> {}
export class PlatformBackend extends GrpcBackend<platformV1.PlatformServiceClient> {}

const BACKENDS = [
  {
    backend: IdentityBackend,
    name: 'identity',
    package: 'identity.v1',
    protoFile: 'identity/v1/identity.proto',
    service: identityV1.IDENTITY_SERVICE_NAME,
    address: (config: GatewayConfig) => config.IDENTITY_GRPC_ADDR,
  },
  {
    backend: AuthBackend,
    name: 'auth',
    package: 'auth.v1',
    protoFile: 'auth/v1/auth.proto',
    service: authV1.AUTH_SERVICE_NAME,
    address: (config: GatewayConfig) => config.AUTH_GRPC_ADDR,
  },
  {
    backend: PlatformBackend,
    name: 'platform',
    package: 'platform.v1',
    protoFile: 'platform/v1/platform.proto',
    service: platformV1.PLATFORM_SERVICE_NAME,
    address: (config: GatewayConfig) => config.PLATFORM_GRPC_ADDR,
  },
] as const;

const clientToken = (name: string) => `${name.toUpperCase()}_GRPC_CLIENT`;

const providers: Provider[] = BACKENDS.map((entry) => ({
  provide: entry.backend,
  inject: [clientToken(entry.name), GATEWAY_CONFIG],
  useFactory: (client: ClientGrpc, config: GatewayConfig) =>
    new entry.backend(entry.name, client, entry.service, config.GRPC_DEADLINE_MS),
}));

/** gRPC clients of the three backend services. */
@Global()
@Module({
  imports: [
    ClientsModule.registerAsync(
      BACKENDS.map((entry) => ({
        name: clientToken(entry.name),
        useFactory: () => {
          const config = loadGatewayConfig();
          return grpcClientOptions({
            package: entry.package,
            protoFile: entry.protoFile,
            url: entry.address(config),
            protoDir: config.PROTO_DIR,
          });
        },
      })),
    ),
  ],
  providers,
  exports: providers,
})
export class BackendsModule {}
