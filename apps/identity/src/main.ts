import 'reflect-metadata';

import { createMetricsRegistry, startTracing } from '@acct/observability';

// Tracing (when configured) patches HTTP, gRPC, pg and Redis as they load, so the service is loaded
// only once it started.
void startTracing('identity').then(async () => {
  const { runMain, startGrpcService } = await import('@acct/grpc');
  // Local modules with require: a relative import() would need ESM file extensions under node16.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { AppModule } = require('./app.module') as typeof import('./app.module');
  const { loadIdentityConfig } = require('./config') as typeof import('./config');
  /* eslint-enable @typescript-eslint/no-require-imports */

  runMain('identity', async () => {
    const config = loadIdentityConfig();
    const registry = createMetricsRegistry('identity');
    await startGrpcService({
      name: 'identity',
      module: AppModule.forRoot(config, registry),
      registry,
      package: 'identity.v1',
      protoFile: 'identity/v1/identity.proto',
      host: config.BIND_HOST,
      grpcPort: config.IDENTITY_GRPC_PORT,
      opsPort: config.IDENTITY_OPS_PORT,
      logLevel: config.LOG_LEVEL,
      protoDir: config.PROTO_DIR,
    });
  });
});
