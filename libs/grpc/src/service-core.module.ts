import { OpsModule, OpsModuleOptions } from '@acct/observability';
import { RevocationModule, RevocationsReadiness } from '@acct/revocation';
import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';

import { ACCESS_TOKEN_VERIFIER, CallerGuard } from './caller.guard';
import { DomainErrorRpcFilter } from './rpc-exception.filter';

export interface ServiceCoreOptions extends OpsModuleOptions {
  /**
   * The validated config, provided globally under `configToken`; it includes `revocationEnv` of
   * @acct/config (every service checks tokens against the revocations).
   */
  configToken: symbol;
  config: unknown;
  /** Verifies the access token every non-public call carries. */
  verifier: Provider;
}

/**
 * What every backend service has: its config everywhere, the ops port with its readiness checks (which
 * `grpc.health.v1` answers from, see GrpcHealth), DomainErrors mapped to gRPC
 * statuses, and the token revocations (`Revocations`, not ready until read from Redis) for its verifier.
 */
@Global()
@Module({})
export class ServiceCoreModule {
  static forRoot(options: ServiceCoreOptions): DynamicModule {
    const { configToken, config, verifier, ...ops } = options;
    const configProvider = { provide: configToken, useValue: config };
    const revocations = RevocationModule.forRoot({
      configToken,
      name: configToken.description?.replace(/_CONFIG$/, '').toLowerCase() ?? 'service',
    });
    return {
      module: ServiceCoreModule,
      imports: [
        revocations,
        OpsModule.forRoot({
          ...ops,
          readiness: [...(ops.readiness ?? []), RevocationsReadiness],
          imports: [...(ops.imports ?? []), revocations],
        }),
      ],
      providers: [
        configProvider,
        verifier,
        { provide: APP_FILTER, useClass: DomainErrorRpcFilter },
        { provide: APP_GUARD, useClass: CallerGuard },
      ],
      exports: [configProvider, ACCESS_TOKEN_VERIFIER, OpsModule],
    };
  }
}
