import 'reflect-metadata';

import { exitGracefullyOnSignals, startTracing } from '@acct/observability';

// Tracing (when configured) patches HTTP, gRPC and Redis as they load, so the gateway is loaded only
// once it started.
void startTracing('gateway').then(async () => {
  const { runMain, shutdownGraceMs } = await import('@acct/grpc');
  // Local modules with require: a relative import() would need ESM file extensions under node16.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { loadGatewayConfig } = require('./config') as typeof import('./config');
  const { startGateway } = require('./start-gateway') as typeof import('./start-gateway');
  /* eslint-enable @typescript-eslint/no-require-imports */

  runMain('gateway', async () => {
    const graceMs = shutdownGraceMs();
    const gateway = await startGateway(loadGatewayConfig());
    exitGracefullyOnSignals({
      logger: gateway.logger,
      graceMs,
      drain: () => gateway.drain(graceMs),
      close: () => gateway.close(),
    });
  });
});
