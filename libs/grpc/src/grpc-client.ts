import { Client, connectivityState, Metadata, ServiceError, status } from '@grpc/grpc-js';
import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { ClientGrpc, ClientsModule } from '@nestjs/microservices';
import { Observable } from 'rxjs';

import { AUTHORIZATION_METADATA_KEY } from './caller.guard';
import { deadline, outgoingMetadata } from './client-call';
import { grpcFailureToDomainError } from './error-mapping';
import { grpcClientOptions } from './proto';
import { GrpcServiceContract } from './services';

/** A grpc-js client's unary method, called directly (no Observable per call). */
type UnaryMethod = (
  request: unknown,
  metadata: Metadata,
  options: ReturnType<typeof deadline>,
  callback: (error: ServiceError | null, response?: unknown) => void,
) => unknown;

export type RequestOf<M> = M extends (request: infer Req, ...rest: never[]) => Observable<unknown> ? Req : never;
export type ResponseOf<M> = M extends (...args: never[]) => Observable<infer Res> ? Res : never;

export interface CallOptions {
  /** The access token the call is made with: the caller's own (forwarded) or the process's own. */
  accessToken?: string;
  /** Overrides the client's deadline (GRPC_DEADLINE_MS) for this call (the incoming call's may be earlier). */
  deadlineMs?: number;
}

/**
 * The one way a process calls another service, typed by the service's generated client interface
 * (`identityV1.IdentityServiceClient`): every call carries the request id, the access token it is
 * made with and a deadline, no later than that of the incoming call it is made for (see `deadline`);
 * every failure becomes a DomainError (the service's own, or `service_unavailable` when it is
 * unreachable or slow, or when the incoming call's deadline has already passed). Declare one subclass
 * per service, as the DI token: `class IdentityGrpc extends GrpcClient<identityV1.IdentityServiceClient> {}`.
 * (Probes and CLIs, which run outside Nest, use `createRawClient` / `callRaw`.)
 */
export class GrpcClient<Service extends object> {
  private grpcClient?: Client;

  constructor(
    /** The service's name in errors ("the identity service is unavailable"). */
    readonly name: string,
    private readonly client: ClientGrpc,
    private readonly serviceName: string,
    private readonly deadlineMs: number,
  ) {}

  call<Name extends keyof Service>(
    name: Name,
    request: RequestOf<Service[Name]>,
    options: CallOptions = {},
  ): Promise<ResponseOf<Service[Name]>> {
    const callOptions = deadline(options.deadlineMs ?? this.deadlineMs);
    // Past its deadline the incoming call is answered already: not started, it fails as a timed-out one.
    if (callOptions.deadline.getTime() <= Date.now()) {
      return Promise.reject(grpcFailureToDomainError({ code: status.DEADLINE_EXCEEDED }, this.name));
    }
    const client = this.raw();
    const method = (client as unknown as Record<string, UnaryMethod>)[name as string];
    const metadata = outgoingMetadata(
      options.accessToken ? { [AUTHORIZATION_METADATA_KEY]: `Bearer ${options.accessToken}` } : {},
    );
    // The grpc-js method itself, as Nest's proxy would call it, without an Observable per call.
    return new Promise((resolve, reject) => {
      method.call(client, request, metadata, callOptions, (error, response) => {
        if (!error) return resolve(response as ResponseOf<Service[Name]>);
        reject(grpcFailureToDomainError(error, this.name));
      });
    });
  }

  /** The grpc-js client of the service (Nest's, created on first use). */
  private raw(): Client {
    this.grpcClient ??= this.client.getClientByServiceName<Client>(this.serviceName);
    return this.grpcClient;
  }

  /**
   * Whether the channel to the service is connected right now (READY), without trying to connect: a
   * service that went away (GOAWAY on a graceful stop, a closed socket on a crash) is `false` at once.
   */
  connected(): boolean {
    return this.raw().getChannel().getConnectivityState(false) === connectivityState.READY;
  }
}

/** Where a client's settings come from: the process's validated config. */
export interface GrpcClientConfig {
  GRPC_DEADLINE_MS: number;
  PROTO_DIR?: string;
}

/** One service another process calls. */
export interface GrpcClientSpec<Config extends GrpcClientConfig> {
  /** The GrpcClient subclass that is both the DI token and the typed client. */
  client: Type<GrpcClient<object>>;
  /** The service's contract (`IDENTITY_SERVICE`, …). */
  contract: GrpcServiceContract;
  /** Its address setting (`IDENTITY_GRPC_ADDR`): one host:port or several ip:port. */
  address: (config: Config) => string;
}

const nestClientToken = (name: string) => `${name.toUpperCase()}_GRPC_CLIENT`;

/** The typed clients of the services a process calls, configured from its config (`configToken`). */
@Module({})
export class GrpcClientsModule {
  static register<Config extends GrpcClientConfig>(
    configToken: symbol | string,
    specs: ReadonlyArray<GrpcClientSpec<Config>>,
  ): DynamicModule {
    const providers: Provider[] = specs.map(({ client, contract }) => ({
      provide: client,
      inject: [nestClientToken(contract.name), configToken],
      useFactory: (nestClient: ClientGrpc, config: Config) =>
        new client(contract.name, nestClient, contract.service, config.GRPC_DEADLINE_MS),
    }));
    return {
      module: GrpcClientsModule,
      imports: [
        ClientsModule.registerAsync(
          specs.map(({ contract, address }) => ({
            name: nestClientToken(contract.name),
            inject: [configToken],
            useFactory: (config: Config) =>
              grpcClientOptions({
                package: contract.package,
                protoFile: contract.protoFile,
                url: address(config),
                protoDir: config.PROTO_DIR,
              }),
          })),
        ),
      ],
      providers,
      exports: providers,
    };
  }
}
