import 'reflect-metadata';

import { createLogger, createMetricsRegistry, exitGracefullyOnSignals, startTracing } from '@acct/observability';

// Tracing (when configured) patches HTTP (object storage) as it loads, so the mailer is loaded only
// once it started.
void startTracing('mailer').then(async () => {
  const { runMain, shutdownGraceMs } = await import('@acct/grpc');
  // Local modules with require: a relative import() would need ESM file extensions under node16.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { loadMailerConfig } = require('./config') as typeof import('./config');
  const { startMailer } = require('./start-mailer') as typeof import('./start-mailer');
  /* eslint-enable @typescript-eslint/no-require-imports */

  runMain('mailer', async () => {
    const graceMs = shutdownGraceMs();
    const config = loadMailerConfig();
    const logger = createLogger('mailer', config.LOG_LEVEL);
    const app = await startMailer(config, logger, createMetricsRegistry('mailer'));
    // Nothing to drain first: closing stops the consumer after the message it is handling.
    exitGracefullyOnSignals({ logger, graceMs, drain: () => Promise.resolve(), close: () => app.close() });
  });
});
