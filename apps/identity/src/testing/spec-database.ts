import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';

import pg from 'pg';

export const REPOSITORY_ROOT = path.resolve(__dirname, '../../../..');

/** The Postgres server the specs use (TEST_POSTGRES_URL, else the local one), as its admin database. */
const serverUrl = () => new URL(process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');

export interface SpecDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh identity database for one spec file, migrated by `tools/prisma.mjs deploy identity` (the
 * real migrations, as in production), dropped afterwards. Random names keep parallel files apart.
 */
export async function createSpecDatabase(): Promise<SpecDatabase> {
  const name = `identity_spec_${randomBytes(6).toString('hex')}`;
  const url = serverUrl();
  url.pathname = `/${name}`;
  await promisify(execFile)(process.execPath, [path.join(REPOSITORY_ROOT, 'tools/prisma.mjs'), 'deploy', 'identity'], {
    cwd: REPOSITORY_ROOT,
    env: { ...process.env, IDENTITY_DATABASE_URL: url.toString() },
  });
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl().toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
