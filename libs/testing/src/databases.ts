import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';

import pg from 'pg';

export const SERVICES_WITH_DATABASES = ['identity', 'auth', 'platform'] as const;
export type ServiceWithDatabase = (typeof SERVICES_WITH_DATABASES)[number];

/** The test Postgres server (the shared one, or TEST_POSTGRES_URL), without a database name. */
export function postgresServerUrl(): URL {
  return new URL(process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
}

export function databaseUrl(database: string, port?: number): string {
  const url = postgresServerUrl();
  url.pathname = `/${database}`;
  if (port !== undefined) {
    url.hostname = '127.0.0.1';
    url.port = String(port);
  }
  return url.toString();
}

const REPOSITORY_ROOT = path.resolve(__dirname, '../../..');

/**
 * Named after the checkout, so two checkouts on one Postgres (worktrees of different branches, with
 * different migrations) never migrate or clone each other's template.
 */
const checkout = createHash('sha256').update(REPOSITORY_ROOT).digest('hex').slice(0, 8);

/** Migrated once per test run by the global setup; every test stack clones it. */
export const templateDatabase = (service: ServiceWithDatabase) => `acct_template_${service}_${checkout}`;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresServerUrl().toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Fresh databases, one per service, cloned from the migrated templates. */
export async function createTestDatabases(): Promise<Record<ServiceWithDatabase, string>> {
  const suffix = randomBytes(4).toString('hex');
  const names = Object.fromEntries(
    SERVICES_WITH_DATABASES.map((service) => [service, `acct_test_${service}_${suffix}`]),
  ) as Record<ServiceWithDatabase, string>;
  await admin(async (client) => {
    for (const service of SERVICES_WITH_DATABASES) {
      await client.query(`CREATE DATABASE "${names[service]}" TEMPLATE "${templateDatabase(service)}"`);
    }
  });
  return names;
}

/** A fresh, empty database named `acct_<purpose>_<random>`, for a tool that makes its own tables. */
export async function createEmptyDatabase(purpose: string): Promise<string> {
  const name = `acct_${purpose}_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE "${name}"`));
  return name;
}

export async function dropDatabases(names: string[]): Promise<void> {
  await admin(async (client) => {
    for (const name of names) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

export interface SpecDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database of `service` for one spec file, migrated by `tools/prisma.mjs deploy <service>`
 * (the real migrations, as in production); `drop` removes it. Random names keep parallel files apart.
 */
export async function createSpecDatabase(service: ServiceWithDatabase): Promise<SpecDatabase> {
  const name = `${service}_spec_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  await promisify(execFile)(process.execPath, [path.join(REPOSITORY_ROOT, 'tools/prisma.mjs'), 'deploy', service], {
    cwd: REPOSITORY_ROOT,
    env: { ...process.env, [`${service.toUpperCase()}_DATABASE_URL`]: url },
  });
  return { name, url, drop: () => dropDatabases([name]) };
}
