import { Clock, SystemClock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import type { Logger } from 'pino';

import { IdentityConfig } from '../config';
import { OrgsRepository } from '../orgs/orgs.repository';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PasswordHasher } from '../passwords/password-hasher';
import { PrismaService } from '../prisma/prisma.service';
import { Transactions } from '../prisma/transactions';
import { UsersRepository } from '../users/users.repository';
import { BootstrapInput, BootstrapService } from './bootstrap.service';

export const BOOTSTRAP_USAGE =
  'usage: bootstrap --org <name> --email <admin e-mail> --password <password> [--display-name <name>] [--json]';

/** A command line that cannot be understood (exit 2). */
export class UsageError extends Error {}

const OPTIONS: Record<string, keyof BootstrapInput> = {
  org: 'orgName',
  email: 'email',
  password: 'password',
  'display-name': 'displayName',
};
/** Accepted and without effect: the output is always one JSON line. */
const FLAGS = new Set(['json']);

/** `--name value` or `--name=value`; each option at most once; `--org`, `--email` and `--password` required. */
export function parseBootstrapArgs(args: readonly string[]): BootstrapInput {
  const values: Partial<Record<keyof BootstrapInput, string>> = {};
  for (let index = 0; index < args.length; index += 1) {
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(args[index] ?? '');
    if (!match?.[1]) throw new UsageError(`unexpected argument ${JSON.stringify(args[index])}`);
    const name = match[1];
    if (FLAGS.has(name) && match[2] === undefined) continue;
    const field = OPTIONS[name];
    if (!field) throw new UsageError(`unknown option --${name}`);
    if (values[field] !== undefined) throw new UsageError(`--${name} given twice`);
    const value = match[2] ?? args[(index += 1)];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    values[field] = value;
  }
  const { orgName, email, password, displayName } = values;
  if (orgName === undefined || email === undefined || password === undefined) {
    throw new UsageError('--org, --email and --password are required');
  }
  return { orgName, email, password, displayName };
}

/** The bootstrap use case over its own database connection: no Nest application, no gRPC server. */
export function createBootstrapService(
  prisma: PrismaService,
  config: IdentityConfig,
  clock: Clock = new SystemClock(),
): BootstrapService {
  return new BootstrapService(
    new OrgsRepository(prisma),
    new UsersRepository(prisma),
    new PasswordHasher(config),
    new Transactions(prisma),
    new OutboxRepository(prisma),
    clock,
  );
}

export interface CommandIo {
  /** The one JSON line of the result. */
  stdout: (line: string) => void;
  logger: Logger;
}

/** Runs `bootstrap`; returns the exit code (0 done, 1 refused, 2 usage). */
export async function runBootstrapCommand(args: readonly string[], config: IdentityConfig, io: CommandIo) {
  let input: BootstrapInput;
  try {
    input = parseBootstrapArgs(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.logger.error(`${error.message}\n${BOOTSTRAP_USAGE}`);
    return 2;
  }
  const prisma = new PrismaService(config);
  try {
    const result = await createBootstrapService(prisma, config).bootstrap(input);
    io.stdout(JSON.stringify({ org_id: result.orgId, admin_user_id: result.adminUserId }));
    io.logger.info(
      { org_id: result.orgId, admin_user_id: result.adminUserId },
      result.created ? 'bootstrapped the org and its admin' : 'already bootstrapped; nothing changed',
    );
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const fields = (error.options.errors ?? []).map(({ field, message }) => `--${field} ${message}`);
    io.logger.error(`bootstrap refused: ${fields.length > 0 ? fields.join('; ') : error.detail}`);
    return 1;
  } finally {
    await prisma.$disconnect();
  }
}
