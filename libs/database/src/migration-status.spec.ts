import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

import { databaseUrl, dropDatabases, postgresServerUrl, repositoryRoot } from '@acct/testing';
import pg from 'pg';

import { DatabaseReadiness } from './index';
import { migrationsDir, pendingMigrations, Queryable, shippedMigrations } from './migration-status';

/** A `pg` client seen as the Prisma client the services pass (`$queryRaw` with a template). */
function queryable(client: pg.Client): Queryable {
  return {
    $queryRaw: async <T>(strings: TemplateStringsArray, ...values: unknown[]) => {
      const text = strings.reduce((sql, part, index) => `${sql}$${index}${part}`);
      return (await client.query(text, values)).rows as T;
    },
  };
}

describe('readiness against the migrations a service ships', () => {
  const name = `acct_test_migrations_${randomBytes(4).toString('hex')}`;
  const dir = path.join(repositoryRoot, 'apps/identity/prisma/migrations');
  const shipped = shippedMigrations(dir);
  let client: pg.Client;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: postgresServerUrl().toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    client = new pg.Client({ connectionString: databaseUrl(name) });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await dropDatabases([name]);
  });

  it('finds the migration folders of a service, in the order they apply', () => {
    expect(shipped.length).toBeGreaterThanOrEqual(3);
    expect(shipped).toEqual([...shipped].sort());
    expect(migrationsDir('identity', {})).toBe(path.resolve('apps/identity/prisma/migrations'));
    expect(migrationsDir('identity', { MIGRATIONS_DIR: '/app/migrations' })).toBe('/app/migrations');
  });

  it('is unready on an empty database, naming every migration', async () => {
    const readiness = new DatabaseReadiness(queryable(client), dir);
    await expect(readiness.check()).rejects.toThrow(
      `${shipped.length} of ${shipped.length} migrations not applied: ${shipped.join(', ')}`,
    );
  });

  it('is unready while a migration is missing, failed or rolled back, and ready once all are applied', async () => {
    execFileSync(process.execPath, [path.join(repositoryRoot, 'tools/prisma.mjs'), 'deploy', 'identity'], {
      cwd: repositoryRoot,
      env: { ...process.env, IDENTITY_DATABASE_URL: databaseUrl(name) },
      stdio: 'ignore',
    });
    const db = queryable(client);
    expect(await pendingMigrations(db, shipped)).toEqual([]);

    const last = shipped.at(-1)!;
    const { rows } = await client.query('SELECT * FROM _prisma_migrations WHERE migration_name = $1', [last]);
    // Half-migrated: the last migration never ran.
    await client.query('DELETE FROM _prisma_migrations WHERE migration_name = $1', [last]);
    const readiness = new DatabaseReadiness(db, dir);
    await expect(readiness.check()).rejects.toThrow(`1 of ${shipped.length} migrations not applied: ${last}`);
    // Started and failed half-way (Prisma leaves finished_at empty), then rolled back.
    const columns = Object.keys(rows[0] as object);
    await client.query(
      `INSERT INTO _prisma_migrations (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
      columns.map((column) => (column === 'finished_at' ? null : (rows[0] as Record<string, unknown>)[column])),
    );
    await expect(readiness.check()).rejects.toThrow(last);
    await client.query(
      'UPDATE _prisma_migrations SET finished_at = now(), rolled_back_at = now() WHERE migration_name = $1',
      [last],
    );
    await expect(readiness.check()).rejects.toThrow(last);

    await client.query('UPDATE _prisma_migrations SET rolled_back_at = NULL WHERE migration_name = $1', [last]);
    await expect(readiness.check()).resolves.toBeUndefined();
  });

  it('is unready, saying where it looked, when the migrations are not shipped with the service', async () => {
    const readiness = new DatabaseReadiness(queryable(client), '/nonexistent/migrations');
    await expect(readiness.check()).rejects.toThrow(
      'no migrations found in /nonexistent/migrations (set MIGRATIONS_DIR)',
    );
  });
});
