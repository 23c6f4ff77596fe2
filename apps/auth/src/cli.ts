// Operator commands of the auth service, against its database only (no gRPC server needed). Prints
// exactly one JSON line on stdout; logs go to stderr. Run from the repository root:
//   node -r ./tools/run-ts.cjs apps/auth/src/cli.ts ensure-bootstrap-client --org-id <uuid> [--rotate-secret]
//     → {"client_id":"…","client_secret":"…"|null}   (null: the client existed; only its hash is kept)
//   node -r ./tools/run-ts.cjs apps/auth/src/cli.ts create-client --org-id <uuid> --name <name> \
//       --scopes "<space separated>" [--roles <role>[,<role>…]] [--type confidential|public] \
//       [--grant-types <g>[,<g>…]] [--redirect-uris <uri>[,<uri>…]]
//     → {"client_id":"…","client_secret":"…"|null}   (null: a public client has no secret)
//   node -r ./tools/run-ts.cjs apps/auth/src/cli.ts list-clients --org-id <uuid>
//     → {"clients":[{"client_id","name","type","grant_types","redirect_uris","scopes","roles","created_at"}]}
//   node -r ./tools/run-ts.cjs apps/auth/src/cli.ts rotate-client-secret --client-id <id>
//     → {"client_id":"…","client_secret":"…"}
//   node -r ./tools/run-ts.cjs apps/auth/src/cli.ts delete-client --client-id <id>
//     → {"client_id":"…","deleted":true}
//   node -r ./tools/run-ts.cjs apps/auth/src/cli.ts rotate-signing-key [--withdraw-old]
//     → {"kid":"…"}
//   node -r ./tools/run-ts.cjs apps/auth/src/cli.ts reseal-secrets
//     → {"signing_keys":n,"totp_secrets":n}   (moved under AUTH_KEY_ENCRYPTION_KEY; docs/runbook.md)
// Failures print {"error":"<code>","message":"…"[,"errors":[…]]} and exit 1 (2 for a usage error).
import 'reflect-metadata';

import { parseArgs } from 'node:util';

import { KEY_WITHDRAWAL_TOPIC } from '@acct/access-token';
import { SystemClock } from '@acct/clock';
import { ConfigError } from '@acct/config';
import { createLogger, NestPinoLogger } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { announceOnce } from '@acct/revocation';
import { Logger } from '@nestjs/common';
import pino from 'pino';

import { ClientRepository } from './clients/client.repository';
import { ClientService } from './clients/client.service';
import { cliClientLookups } from './clients/client-cache';
import { AuthConfig, loadAuthConfig } from './config';
import { SecretResealer } from './key-change/secret-resealer';
import { SigningKeyRepository } from './keys/signing-key.repository';
import { SigningKeyService } from './keys/signing-key.service';
import { PrismaService } from './prisma/prisma.service';

const USAGE = [
  'usage: cli.ts ensure-bootstrap-client --org-id <uuid> [--rotate-secret]',
  '       cli.ts create-client --org-id <uuid> --name <name> --scopes "<scopes>" [--roles <role>[,<role>…]]',
  '                            [--type confidential|public] [--grant-types <g>,…] [--redirect-uris <uri>,…]',
  '       cli.ts list-clients --org-id <uuid>',
  '       cli.ts rotate-client-secret --client-id <id>',
  '       cli.ts delete-client --client-id <id>',
  '       cli.ts rotate-signing-key [--withdraw-old]',
  '       cli.ts reseal-secrets',
].join('\n');

class UsageError extends Error {}

/** A command that could not do all it was asked: its error code and message. */
class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Command = (args: string[], prisma: PrismaService, config: AuthConfig) => Promise<Record<string, unknown>>;

const COMMANDS: Record<string, Command> = {
  'ensure-bootstrap-client': async (args, prisma, config) => {
    const { values } = usage(() =>
      parseArgs({
        args,
        strict: true,
        options: { 'org-id': { type: 'string' }, 'rotate-secret': { type: 'boolean' } },
      }),
    );
    const orgId = need(values['org-id'], 'org-id');
    const { clientId, clientSecret } = await clientsOf(prisma, config).ensureBootstrap(
      orgId,
      values['rotate-secret'] === true,
    );
    Logger.log(`bootstrap client ${clientId} of org ${orgId} ${clientSecret ? 'has a new secret' : 'unchanged'}`);
    return { client_id: clientId, client_secret: clientSecret };
  },

  'create-client': async (args, prisma, config) => {
    const { values } = usage(() =>
      parseArgs({
        args,
        strict: true,
        options: {
          'org-id': { type: 'string' },
          name: { type: 'string' },
          scopes: { type: 'string' },
          roles: { type: 'string' },
          type: { type: 'string' },
          'grant-types': { type: 'string' },
          'redirect-uris': { type: 'string' },
        },
      }),
    );
    const list = (value: string | undefined) =>
      value === undefined ? undefined : value.split(/[\s,]+/).filter(Boolean);
    const { clientId, clientSecret } = await clientsOf(prisma, config).create({
      orgId: need(values['org-id'], 'org-id'),
      name: need(values.name, 'name'),
      scopes: need(values.scopes, 'scopes').split(/\s+/).filter(Boolean),
      roles: list(values.roles) ?? [],
      type: values.type,
      grantTypes: list(values['grant-types']),
      redirectUris: list(values['redirect-uris']),
    });
    Logger.log(`client ${clientId} created`);
    return { client_id: clientId, client_secret: clientSecret };
  },

  'list-clients': async (args, prisma, config) => {
    const { values } = usage(() => parseArgs({ args, strict: true, options: { 'org-id': { type: 'string' } } }));
    const clients = await clientsOf(prisma, config).list(need(values['org-id'], 'org-id'));
    return {
      clients: clients.map((client) => ({
        client_id: client.id,
        name: client.name,
        type: client.type,
        grant_types: client.grantTypes,
        redirect_uris: client.redirectUris,
        scopes: client.scopes,
        roles: client.roles,
        created_at: client.createdAt.toISOString(),
      })),
    };
  },

  'rotate-client-secret': async (args, prisma, config) => {
    const { values } = usage(() => parseArgs({ args, strict: true, options: { 'client-id': { type: 'string' } } }));
    const { clientId, clientSecret } = await clientsOf(prisma, config).rotateSecret(
      need(values['client-id'], 'client-id'),
    );
    Logger.log(`client ${clientId} has a new secret; the old one no longer works`);
    return { client_id: clientId, client_secret: clientSecret };
  },

  'delete-client': async (args, prisma, config) => {
    const { values } = usage(() => parseArgs({ args, strict: true, options: { 'client-id': { type: 'string' } } }));
    const clientId = need(values['client-id'], 'client-id');
    await clientsOf(prisma, config).delete(clientId);
    Logger.log(`client ${clientId} deleted`);
    return { client_id: clientId, deleted: true };
  },

  'rotate-signing-key': async (args, prisma, config) => {
    const { values } = usage(() => parseArgs({ args, strict: true, options: { 'withdraw-old': { type: 'boolean' } } }));
    const keys = new SigningKeyService(new SigningKeyRepository(prisma), new SystemClock(), config);
    const { kid, withdrawn } = await keys.rotate({ withdrawPrevious: values['withdraw-old'] === true });
    // Every verifier refuses the withdrawn keys at once (without the notice: within a minute).
    if (withdrawn.length > 0) {
      await announceOnce(
        { natsUrl: config.NATS_URL, keyPrefix: config.REDIS_KEY_PREFIX, name: 'auth-cli' },
        KEY_WITHDRAWAL_TOPIC,
        JSON.stringify(withdrawn),
      ).catch((error: Error) =>
        Logger.warn(`running processes not told of the withdrawal (${error.message}); they notice within a minute`),
      );
    }
    return { kid };
  },

  'reseal-secrets': async (args, prisma, config) => {
    usage(() => parseArgs({ args, strict: true, options: {} }));
    const report = await new SecretResealer(prisma, config).resealAll();
    Logger.log(`${report.signingKeys} signing keys and ${report.totpSecrets} TOTP secrets moved under the current key`);
    if (report.unreadable.length > 0) {
      throw new CommandFailure(
        'unreadable_secrets',
        `neither AUTH_KEY_ENCRYPTION_KEY nor AUTH_KEY_ENCRYPTION_KEY_PREVIOUS decrypts ${report.unreadable.length} ` +
          `(${report.unreadable.join(', ')}); the others were moved`,
      );
    }
    return { signing_keys: report.signingKeys, totp_secrets: report.totpSecrets };
  },
};

const clientsOf = (prisma: PrismaService, config: AuthConfig) =>
  new ClientService(
    new ClientRepository(
      prisma,
      cliClientLookups(config, (message) => Logger.warn(message)),
    ),
  );

/** Unknown options and stray arguments are usage errors. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function need(value: string | boolean | undefined, name: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const [name = '', ...args] = argv;
  const command = COMMANDS[name];
  if (!command) return fail(2, 'usage', USAGE);
  let config: AuthConfig;
  try {
    config = loadAuthConfig();
  } catch (error) {
    if (error instanceof ConfigError) return fail(1, 'invalid_configuration', error.message);
    throw error;
  }
  Logger.overrideLogger(new NestPinoLogger(createLogger('auth-cli', config.LOG_LEVEL, pino.destination(2))));
  const prisma = new PrismaService(config);
  try {
    process.stdout.write(`${JSON.stringify(await command(args, prisma, config))}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(2, 'usage', `${error.message}\n${USAGE}`);
    if (error instanceof CommandFailure) return fail(1, error.code, error.message);
    if (error instanceof DomainError) {
      return fail(1, error.code, error.detail, error.options.errors ? { errors: error.options.errors } : {});
    }
    return fail(1, 'internal_error', error instanceof Error ? (error.stack ?? error.message) : String(error));
  } finally {
    await prisma.$disconnect();
  }
}

function fail(status: number, code: string, message: string, extra: Record<string, unknown> = {}): number {
  // The failing fields go to stderr too, as the platform CLI's do: `npm run cli` shows stderr and drops
  // a failure's stdout, so an operator otherwise read "The request has invalid fields." and no more.
  process.stderr.write(extra.errors ? `${message} ${JSON.stringify(extra.errors)}\n` : `${message}\n`);
  process.stdout.write(`${JSON.stringify({ error: code, message: message.split('\n')[0], ...extra })}\n`);
  return status;
}

main(process.argv.slice(2)).then(
  (status) => (process.exitCode = status),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
