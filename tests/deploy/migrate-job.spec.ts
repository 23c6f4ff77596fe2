/**
 * The migration Job (`npm run migrate`, tools/prisma.mjs deploy) on a server where the services'
 * databases were created beforehand and their user may connect to those only (README, Prerequisites:
 * "the user needs CREATEDB, or create the three databases first"), as on a hardened or managed server.
 */
import { execFile } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { createSpecDatabase, databaseUrl, freePort, postgresServerUrl, SpecDatabase } from '@acct/testing';

const repoRoot = join(__dirname, '..', '..');

/** The `database` parameter of a PostgreSQL StartupMessage (protocol 3.0), once it arrived whole. */
function startupDatabase(bytes: Buffer): string | null | undefined {
  if (bytes.length < 8 || bytes.length < bytes.readInt32BE(0)) return undefined;
  const fields = bytes.subarray(8, bytes.readInt32BE(0)).toString('utf8').split('\0');
  const index = fields.indexOf('database');
  return index >= 0 ? (fields[index + 1] ?? null) : null;
}

/** The server's refusal of a connection to a database the user has no CONNECT privilege on. */
function permissionDenied(database: string): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C42501', `Mpermission denied for database "${database}"`]
    .map((field) => `${field}\0`)
    .join('');
  const body = Buffer.from(`${fields}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** The test server, except that its `postgres` database refuses every connection (REVOKE CONNECT). */
async function serverWithoutPostgresDatabase(): Promise<{ port: number; close(): Promise<void> }> {
  const target = postgresServerUrl();
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const database = startupDatabase(received);
      if (database === undefined) return;
      client.off('data', onData);
      if (database === 'postgres') return void client.end(permissionDenied(database));
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      upstream.on('close', () => client.destroy());
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      upstream.write(received);
      client.pipe(upstream).pipe(client);
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the migration Job where the databases were created first and only they admit the user', () => {
  let database: SpecDatabase;
  let server: Awaited<ReturnType<typeof serverWithoutPostgresDatabase>>;

  beforeAll(async () => {
    database = await createSpecDatabase('identity');
    server = await serverWithoutPostgresDatabase();
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('applies the migrations (nothing to do here) without asking for the postgres database', async () => {
    // Not spawnSync: the server above answers from this process.
    const failure = await promisify(execFile)(process.execPath, ['tools/prisma.mjs', 'deploy', 'identity'], {
      cwd: repoRoot,
      env: { ...process.env, IDENTITY_DATABASE_URL: databaseUrl(database.name, server.port) },
    }).then(
      () => undefined,
      (error: Error & { stderr?: string }) => error.stderr || error.message,
    );
    expect(failure).toBeUndefined();
  }, 60_000);
});
