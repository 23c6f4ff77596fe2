import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';

import { databaseUrl, postgresServerUrl } from '@acct/testing';
import pg from 'pg';

const root = path.resolve(__dirname, '../../../..');

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresServerUrl().toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function waitForSessionsToEnd(database: string, timeoutMs = 2000): Promise<void> {
  const client = new pg.Client({ connectionString: postgresServerUrl().toString() });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ count: string }>(
        'SELECT count(*) FROM pg_stat_activity WHERE datname = $1',
        [database],
      );
      if (rows[0]?.count === '0') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  url: string;
  /** Plain SQL against it, for checks the services do not expose. */
  query<Row extends pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<Row[]>;
  drop(): Promise<void>;
}

/**
 * A fresh auth database for one spec file, migrated with the real migrations
 * (`node tools/prisma.mjs deploy auth`); `drop()` removes it WITH (FORCE).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `acct_auth_spec_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  await admin(`CREATE DATABASE "${name}"`);
  await promisify(execFile)(process.execPath, [path.join(root, 'tools/prisma.mjs'), 'deploy', 'auth'], {
    cwd: root,
    env: { ...process.env, AUTH_DATABASE_URL: url },
  });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  return {
    url,
    query: async <Row extends pg.QueryResultRow>(sql: string, values?: unknown[]) =>
      (await pool.query<Row>(sql, values)).rows,
    drop: async () => {
      await pool.end();
      // Connections a closed app is still hanging up get a moment to go, so FORCE does not kill one
      // mid-close (its client would report the kill as an unhandled error in the spec).
      await waitForSessionsToEnd(name);
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
