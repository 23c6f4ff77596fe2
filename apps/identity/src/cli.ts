import 'reflect-metadata';

import { ConfigError } from '@acct/config';
import { createLogger } from '@acct/observability';
import pino from 'pino';

import { runBootstrapCommand } from './bootstrap/bootstrap.command';
import { loadIdentityConfig } from './config';

/**
 * Identity's operator commands, run without the gRPC server (contract §0):
 *   node -r ./tools/run-ts.cjs apps/identity/src/cli.ts bootstrap --org <name> --email <e-mail> --password <pw>
 * The result is one JSON line on stdout; logs go to stderr.
 */
async function main(argv: readonly string[]): Promise<number> {
  const [command, ...args] = argv;
  let config;
  try {
    config = loadIdentityConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  const logger = createLogger('identity-cli', config.LOG_LEVEL, pino.destination({ dest: 2, sync: true }));
  switch (command) {
    case 'bootstrap':
      return runBootstrapCommand(args, config, { stdout: (line) => process.stdout.write(`${line}\n`), logger });
    default:
      logger.error(`unknown command ${JSON.stringify(command ?? '')}; commands: bootstrap`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
