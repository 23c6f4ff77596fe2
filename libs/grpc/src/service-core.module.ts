import { OpsModule, OpsModuleOptions } from '@acct/observability';
import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';

import { ACCESS_TOKEN_VERIFIER, CallerGuard } from './caller.guard';
import { GrpcRequestContextInterceptor } from './request-context.interceptor';
import { DomainErrorRpcFilter } from './rpc-exception.filter';

export interface ServiceCoreOptions extends OpsModuleOptions {
  /** The validated config, provided globally under `configToken`. */
  configToken: symbol;
  config: unknown;
  /** Verifies the access token every non-public call carries. */
  verifier: Provider;
}

/**
 * What every backend service has: its config everywhere, the ops port with its readiness checks (which
 * `grpc.health.v1` answers from, see GrpcHealth), request ids in logs, and DomainErrors mapped to gRPC statuses.
 */
@Global()
@Module({})
export class ServiceCoreModule {
  static forRoot(options: ServiceCoreOptions): DynamicModule {
    const { configToken, config, verifier, ...ops } = options;
    const configProvider = { provide: configToken, useValue: config };
    return {
      module: ServiceCoreModule,
      imports: [OpsModule.forRoot(ops)],
      providers: [
        configProvider,
        verifier,
        { provide: APP_FILTER, useClass: DomainErrorRpcFilter },
        { provide: APP_GUARD, useClass: CallerGuard },
        { provide: APP_INTERCEPTOR, useClass: GrpcRequestContextInterceptor },
      ],
      exports: [configProvider, ACCESS_TOKEN_VERIFIER, OpsModule],
    };
  }
}
