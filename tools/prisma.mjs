#!/usr/bin/env node
// Prisma for every service, offline: `generate` (Prisma 7 client, no Rust engine), `deploy` (apply
// migrations, creating the database when missing), `status` (deploy's dry run: what it would apply), `diff <service> <name>` (a new migration folder
// produced by Prisma's own diff), `check` (fails when a schema and its migrations disagree).
// Prisma 7's CLI needs the Rust schema engine for migrate, which cannot be downloaded here, so
// migrations run on Prisma 6.19's CLI (package alias `prisma-migrate`) with its WASM engine.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SERVICES = ['identity', 'auth', 'platform'];

export function databaseUrl(service, env = process.env) {
  return env[`${service.toUpperCase()}_DATABASE_URL`] ?? `postgresql://postgres@127.0.0.1:5432/${service}`;
}

const schemaPath = (service) => path.join(root, 'apps', service, 'prisma', 'schema.prisma');
const migrationsPath = (service) => path.join(root, 'apps', service, 'prisma', 'migrations');

// The engines are never downloaded; the CLIs only insist that these paths exist.
const engineEnv = {
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? fileURLToPath(import.meta.url),
  PRISMA_QUERY_ENGINE_LIBRARY: process.env.PRISMA_QUERY_ENGINE_LIBRARY ?? fileURLToPath(import.meta.url),
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};

function run(cli, args, env, { capture = false } = {}) {
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: root,
    env: { ...process.env, ...engineEnv, ...env },
    stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit',
    encoding: 'utf8',
  });
  return result;
}

const prisma7 = path.join(root, 'node_modules/prisma/build/index.js');
const prisma6 = path.join(root, 'node_modules/prisma-migrate/build/index.js');

/** Prisma 6.19 wants a `url` in the datasource block, Prisma 7 forbids it: migrate reads a copy with one. */
function migrateSchema(service) {
  const source = fs.readFileSync(schemaPath(service), 'utf8');
  const withUrl = source.replace(
    /(datasource\s+\w+\s*\{[^}]*provider\s*=\s*"postgresql")/,
    '$1\n  url      = env("MIGRATE_DATABASE_URL")',
  );
  const target = path.join(root, 'apps', service, 'prisma', '.migrate.prisma');
  fs.writeFileSync(target, withUrl);
  return target;
}

function migrate(service, args, options) {
  const schema = migrateSchema(service);
  return run(
    prisma6,
    ['migrate', ...args, '--config', 'tools/prisma/migrate.config.ts'],
    {
      MIGRATE_SCHEMA: schema,
      MIGRATE_DATABASE_URL: databaseUrl(service),
    },
    options,
  );
}

export async function ensureDatabase(url) {
  // Usually the database is there (created beforehand, or by an earlier run): then the server's
  // `postgres` database, which the user may not be allowed to connect to, is not needed.
  const existing = new pg.Client({ connectionString: url });
  try {
    await existing.connect();
    return;
  } catch (error) {
    if (error.code !== '3D000') throw error; // anything but "database does not exist"
  } finally {
    await existing.end().catch(() => undefined);
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } catch (error) {
    if (error.code !== '42P04') throw error; // created concurrently by someone else
  } finally {
    await client.end();
  }
}

/** The migration folders of a service that its database has not applied (all of them if it has none). */
async function pendingMigrations(service) {
  const shipped = fs
    .readdirSync(migrationsPath(service), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const client = new pg.Client({ connectionString: databaseUrl(service) });
  try {
    await client.connect();
  } catch (error) {
    if (error.code === '3D000') return shipped; // no database yet: deploy creates it
    throw error;
  }
  try {
    const { rows } = await client.query(
      `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    return shipped.filter((name) => !applied.has(name));
  } catch (error) {
    if (error.code === '42P01') return shipped; // no migration has run yet
    throw error;
  } finally {
    await client.end();
  }
}

function fail(message) {
  console.error(`prisma: ${message}`);
  process.exit(1);
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  const only = (name) => (name ? [name] : SERVICES);
  switch (command) {
    case 'generate':
      for (const service of only(rest[0])) {
        const result = run(prisma7, ['generate', '--schema', schemaPath(service)], {}, { capture: true });
        if (result.status !== 0) fail(`generate failed for ${service}`);
      }
      break;
    case 'deploy':
      for (const service of only(rest[0])) {
        await ensureDatabase(databaseUrl(service));
        const result = migrate(service, ['deploy'], { capture: true });
        if (result.status !== 0) fail(`migrate deploy failed for ${service}`);
      }
      break;
    case 'status': {
      // The dry run of `deploy`: which migrations it would apply, changing nothing (not even creating
      // a missing database).
      for (const service of only(rest[0])) {
        const pending = await pendingMigrations(service);
        console.log(
          pending.length === 0
            ? `prisma: ${service}: up to date`
            : `prisma: ${service}: deploy would apply ${pending.length}: ${pending.join(', ')}`,
        );
      }
      break;
    }
    case 'diff': {
      const [service, name] = rest;
      if (!SERVICES.includes(service) || !/^[a-z0-9_]+$/.test(name ?? ''))
        fail('usage: diff <service> <snake_case_name>');
      await ensureDatabase(databaseUrl(service));
      const dir = migrationsPath(service);
      fs.mkdirSync(dir, { recursive: true });
      const hasMigrations = fs.readdirSync(dir).some((entry) => fs.statSync(path.join(dir, entry)).isDirectory());
      const from = hasMigrations ? ['--from-migrations', dir] : ['--from-empty'];
      const result = migrate(service, ['diff', ...from, '--to-schema-datamodel', migrateSchema(service), '--script'], {
        capture: true,
      });
      if (result.status !== 0) fail(`diff failed for ${service}`);
      if (!/^\s*(CREATE|ALTER|DROP)/m.test(result.stdout)) {
        console.log(`prisma: ${service} has no changes`);
        break;
      }
      const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
      const folder = path.join(dir, `${stamp}_${name}`);
      fs.mkdirSync(folder);
      fs.writeFileSync(path.join(folder, 'migration.sql'), result.stdout);
      fs.writeFileSync(
        path.join(dir, 'migration_lock.toml'),
        '# Managed by Prisma Migrate.\nprovider = "postgresql"\n',
      );
      console.log(`prisma: wrote ${path.relative(root, folder)}`);
      break;
    }
    case 'check': {
      let drift = false;
      for (const service of only(rest[0])) {
        await ensureDatabase(databaseUrl(service));
        const result = migrate(
          service,
          [
            'diff',
            '--from-migrations',
            migrationsPath(service),
            '--to-schema-datamodel',
            migrateSchema(service),
            '--exit-code',
          ],
          { capture: true },
        );
        if (result.status === 2) {
          console.error(
            `prisma: ${service}: schema.prisma and its migrations disagree; run: node tools/prisma.mjs diff ${service} <name>`,
          );
          drift = true;
        } else if (result.status !== 0) fail(`check failed for ${service}`);
        else console.log(`prisma: ${service}: schema and migrations agree`);
      }
      if (drift) process.exit(1);
      break;
    }
    default:
      fail('usage: node tools/prisma.mjs generate|deploy|status|check [service] | diff <service> <name>');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => fail(error.stack ?? String(error)));
}
