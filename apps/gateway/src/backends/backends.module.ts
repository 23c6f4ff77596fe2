import { platformV1 } from '@acct/contracts';
import { deadline, grpcClientOptions, outgoingMetadata, unary } from '@acct/grpc';
import { Global, Inject, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { ClientGrpc, ClientsModule } from '@nestjs/microservices';

import { GATEWAY_CONFIG, GatewayConfig, loadGatewayConfig } from '../config';

const PLATFORM_CLIENT = 'PLATFORM_CLIENT';

/** The platform service as the gateway calls it: every call with the request id and a deadline. */
@Injectable()
export class PlatformBackend implements OnModuleInit {
  private service!: platformV1.PlatformServiceClient;

  constructor(
    @Inject(PLATFORM_CLIENT) private readonly client: ClientGrpc,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  onModuleInit() {
    this.service = this.client.getService<platformV1.PlatformServiceClient>(platformV1.PLATFORM_SERVICE_NAME);
  }

  getHealth(deadlineMs = this.config.GRPC_DEADLINE_MS) {
    return unary('platform', () =>
      (this.service.getHealth as CallWithOptions<platformV1.GetHealthRequest, platformV1.GetHealthResponse>)(
        {},
        outgoingMetadata(),
        deadline(deadlineMs),
      ),
    );
  }
}

/** Nest's generated client methods pass extra arguments (call options) through to grpc-js. */
type CallWithOptions<Req, Res> = (
  request: Req,
  metadata: ReturnType<typeof outgoingMetadata>,
  options: ReturnType<typeof deadline>,
) => import('rxjs').Observable<Res>;

@Global()
@Module({
  imports: [
    ClientsModule.registerAsync([
      {
        name: PLATFORM_CLIENT,
        useFactory: () => {
          const config = loadGatewayConfig();
          return grpcClientOptions({
            package: 'platform.v1',
            protoFile: 'platform/v1/platform.proto',
            url: config.PLATFORM_GRPC_ADDR,
            protoDir: config.PROTO_DIR,
          });
        },
      },
    ]),
  ],
  providers: [PlatformBackend],
  exports: [PlatformBackend],
})
export class BackendsModule {}
