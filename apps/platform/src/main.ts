import 'reflect-metadata';

import { createMetricsRegistry, startTracing } from '@acct/observability';

// Tracing (when configured) patches HTTP, gRPC, pg and Redis as they load, so the service is loaded
// only once it started.
void startTracing('platform').then(async () => {
  const { runMain, startGrpcService } = await import('@acct/grpc');
  // Local modules with require: a relative import() would need ESM file extensions under node16.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { AppModule } = require('./app.module') as typeof import('./app.module');
  const { loadPlatformConfig } = require('./config') as typeof import('./config');
  /* eslint-enable @typescript-eslint/no-require-imports */

  runMain('platform', async () => {
    const config = loadPlatformConfig();
    const registry = createMetricsRegistry('platform');
    await startGrpcService({
      name: 'platform',
      module: AppModule.forRoot(config, registry),
      registry,
      package: 'platform.v1',
      protoFile: 'platform/v1/platform.proto',
      host: config.BIND_HOST,
      grpcPort: config.PLATFORM_GRPC_PORT,
      opsPort: config.PLATFORM_OPS_PORT,
      logLevel: config.LOG_LEVEL,
      protoDir: config.PROTO_DIR,
    });
  });
});
