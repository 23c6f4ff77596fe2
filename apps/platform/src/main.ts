import 'reflect-metadata';

import { runMain, startGrpcService } from '@acct/grpc';
import { createMetricsRegistry } from '@acct/observability';

import { AppModule } from './app.module';
import { loadPlatformConfig } from './config';

runMain('platform', async () => {
  const config = loadPlatformConfig();
  await startGrpcService({
    name: 'platform',
    module: AppModule.forRoot(config, createMetricsRegistry('platform')),
    package: 'platform.v1',
    protoFile: 'platform/v1/platform.proto',
    host: config.BIND_HOST,
    grpcPort: config.PLATFORM_GRPC_PORT,
    opsPort: config.PLATFORM_OPS_PORT,
    logLevel: config.LOG_LEVEL,
    protoDir: config.PROTO_DIR,
  });
});
