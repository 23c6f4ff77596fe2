import 'reflect-metadata';

import { createMetricsRegistry, startTracing } from '@acct/observability';

// Tracing (when configured) patches HTTP, gRPC, pg and Redis as they load, so the service is loaded
// only once it started.
void startTracing('auth').then(async () => {
  const { runMain, startGrpcService } = await import('@acct/grpc');
  // Local modules with require: a relative import() would need ESM file extensions under node16.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { AppModule } = require('./app.module') as typeof import('./app.module');
  const { loadAuthConfig } = require('./config') as typeof import('./config');
  /* eslint-enable @typescript-eslint/no-require-imports */

  runMain('auth', async () => {
    const config = loadAuthConfig();
    const registry = createMetricsRegistry('auth');
    await startGrpcService({
      name: 'auth',
      module: AppModule.forRoot(config, registry),
      registry,
      package: 'auth.v1',
      protoFile: 'auth/v1/auth.proto',
      host: config.BIND_HOST,
      grpcPort: config.AUTH_GRPC_PORT,
      opsPort: config.AUTH_OPS_PORT,
      logLevel: config.LOG_LEVEL,
      protoDir: config.PROTO_DIR,
    });
  });
});
