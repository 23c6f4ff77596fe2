import 'reflect-metadata';

import { runMain, startGrpcService } from '@acct/grpc';
import { createMetricsRegistry } from '@acct/observability';

import { AppModule } from './app.module';
import { loadAuthConfig } from './config';

runMain('auth', async () => {
  const config = loadAuthConfig();
  await startGrpcService({
    name: 'auth',
    module: AppModule.forRoot(config, createMetricsRegistry('auth')),
    package: 'auth.v1',
    protoFile: 'auth/v1/auth.proto',
    host: config.BIND_HOST,
    grpcPort: config.AUTH_GRPC_PORT,
    opsPort: config.AUTH_OPS_PORT,
    logLevel: config.LOG_LEVEL,
    protoDir: config.PROTO_DIR,
  });
});
