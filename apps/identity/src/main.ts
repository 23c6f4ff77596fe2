import 'reflect-metadata';

import { runMain, startGrpcService } from '@acct/grpc';
import { createMetricsRegistry } from '@acct/observability';

import { AppModule } from './app.module';
import { loadIdentityConfig } from './config';

runMain('identity', async () => {
  const config = loadIdentityConfig();
  await startGrpcService({
    name: 'identity',
    module: AppModule.forRoot(config, createMetricsRegistry('identity')),
    package: 'identity.v1',
    protoFile: 'identity/v1/identity.proto',
    host: config.BIND_HOST,
    grpcPort: config.IDENTITY_GRPC_PORT,
    opsPort: config.IDENTITY_OPS_PORT,
    logLevel: config.LOG_LEVEL,
    protoDir: config.PROTO_DIR,
  });
});
