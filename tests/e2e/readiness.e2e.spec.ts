import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

import {
  databaseUrl,
  DedicatedServer,
  dropDatabases,
  listServicesByReflection,
  postgresServerUrl,
  repositoryRoot,
  StandardHealthClient,
  TestStack,
  waitFor,
} from '@acct/testing';
import pg from 'pg';

/** Applies one service's migrations to a database, as the migration job does. */
function migrate(service: 'identity' | 'platform', url: string) {
  execFileSync(process.execPath, [path.join(repositoryRoot, 'tools/prisma.mjs'), 'deploy', service], {
    cwd: repositoryRoot,
    env: { ...process.env, [`${service.toUpperCase()}_DATABASE_URL`]: url },
    stdio: 'ignore',
  });
}

async function sql(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

/**
 * Issue 13 item 1 on real processes: a service is unready (`/readyz` 503, gRPC health NOT_SERVING)
 * until every migration it ships is applied, and turns ready by itself once they are.
 */
describe('readiness follows the schema', () => {
  const suffix = randomBytes(4).toString('hex');
  const empty = `acct_test_empty_identity_${suffix}`;
  const half = `acct_test_half_platform_${suffix}`;
  let stack: TestStack;
  let identityHealth: StandardHealthClient;
  let platformHealth: StandardHealthClient;
  let lastPlatformMigration: Record<string, unknown>;

  const readyz = async (app: 'identity' | 'platform') => {
    const response = await fetch(stack.opsUrl(app, '/readyz'));
    return { status: response.status, body: JSON.stringify(await response.json()) };
  };

  beforeAll(async () => {
    const server = postgresServerUrl().toString();
    await sql(server, `CREATE DATABASE "${empty}"`);
    await sql(server, `CREATE DATABASE "${half}"`);
    // Half-migrated: every platform migration but the last one recorded.
    migrate('platform', databaseUrl(half));
    [lastPlatformMigration] = await sql(
      databaseUrl(half),
      'DELETE FROM _prisma_migrations WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations) RETURNING *',
    );
    stack = await TestStack.start({
      apps: ['identity', 'platform'],
      env: { IDENTITY_DATABASE_URL: databaseUrl(empty), PLATFORM_DATABASE_URL: databaseUrl(half) },
    });
    identityHealth = new StandardHealthClient(stack.env.IDENTITY_GRPC_ADDR);
    platformHealth = new StandardHealthClient(stack.env.PLATFORM_GRPC_ADDR);
  });

  afterAll(async () => {
    identityHealth?.close();
    platformHealth?.close();
    await stack?.close();
    await dropDatabases([empty, half]);
  });

  it('keeps a service on an empty database unready, naming the missing migrations, until they are applied', async () => {
    const before = await readyz('identity');
    expect(before.status).toBe(503);
    expect(before.body).toContain('migrations not applied');
    expect(before.body).toContain('_init');
    expect(await identityHealth.check('')).toEqual({ status: 'NOT_SERVING' });
    expect(await identityHealth.check('identity.v1.IdentityService')).toEqual({ status: 'NOT_SERVING' });
    const watch = identityHealth.watch('identity.v1.IdentityService');
    // The watch must have started before the (synchronous) migration blocks this process's event loop.
    await waitFor('Watch sees NOT_SERVING', () => (watch.statuses.includes('NOT_SERVING') ? true : undefined));

    migrate('identity', databaseUrl(empty));

    await waitFor('identity ready', async () => ((await readyz('identity')).status === 200 ? true : undefined));
    expect(await identityHealth.check('')).toEqual({ status: 'SERVING' });
    await waitFor('Watch sees SERVING', () => (watch.statuses.includes('SERVING') ? true : undefined));
    expect(watch.statuses).toEqual(['NOT_SERVING', 'SERVING']);
    watch.cancel();
  });

  it('keeps a half-migrated service unready, naming the one missing migration, until it is applied', async () => {
    const before = await readyz('platform');
    expect(before.status).toBe(503);
    expect(before.body).toContain(`migrations not applied: ${String(lastPlatformMigration.migration_name)}`);
    expect(await platformHealth.check('platform.v1.PlatformService')).toEqual({ status: 'NOT_SERVING' });

    const columns = Object.keys(lastPlatformMigration);
    await sql(
      databaseUrl(half),
      `INSERT INTO _prisma_migrations (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
      columns.map((column) => lastPlatformMigration[column]),
    );

    await waitFor('platform ready', async () => ((await readyz('platform')).status === 200 ? true : undefined));
    expect(await platformHealth.check('platform.v1.PlatformService')).toEqual({ status: 'SERVING' });
  });

  it('describes itself through reflection and answers NOT_FOUND for a service it does not serve', async () => {
    expect((await listServicesByReflection(stack.env.IDENTITY_GRPC_ADDR)).sort()).toEqual([
      'grpc.health.v1.Health',
      'identity.v1.IdentityService',
    ]);
    expect((await listServicesByReflection(stack.env.PLATFORM_GRPC_ADDR)).sort()).toEqual([
      'grpc.health.v1.Health',
      'platform.v1.PlatformService',
    ]);
    expect(await identityHealth.check('platform.v1.PlatformService')).toEqual({ code: 5 });
  });
});

/**
 * README Decisions, "Token revocation": a process that verifies tokens is not ready until it has read
 * the revocation set once (it refuses every token with 503 until then). The gateway verifies tokens
 * too, so its `/readyz` must say so, or Kubernetes routes to a gateway that refuses every caller.
 */
describe('the gateway is ready only once it knows the revocations', () => {
  let redis: DedicatedServer;
  let stack: TestStack;

  const readyz = async () => {
    const response = await fetch(stack.opsUrl('gateway', '/readyz'));
    return { status: response.status, body: JSON.stringify(await response.json()) };
  };

  beforeAll(async () => {
    redis = await DedicatedServer.redis();
    await redis.stop();
    // The gateway alone: its first health report (the platform does not answer: `down`) comes at once.
    stack = await TestStack.start({ apps: ['gateway'], redisUrl: redis.url });
  });

  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
  });

  it('stays unready, naming the revocations, while Redis was never read; ready once it is', async () => {
    // Its own first health report is in: the only thing missing is the revocation set.
    await waitFor('first health report', async () =>
      (await readyz()).body.includes('"health_report":{"status":"up"') ? true : undefined,
    );
    const before = await readyz();
    expect(before.status).toBe(503);
    expect(before.body).toContain(
      '"revocations":{"message":"the revocation list was not read from Redis yet","status":"down"}',
    );

    await redis.start();

    await waitFor('gateway ready', async () => ((await readyz()).status === 200 ? true : undefined), {
      timeoutMs: 15_000,
    });
  });
});
