import { randomUUID } from 'node:crypto';

import {
  Answer,
  ApiClient,
  expectProblem,
  newOrg,
  postgresServerUrl,
  TestStack,
  uniqueEmail,
  waitFor,
} from '@acct/testing';
import pg from 'pg';

/**
 * A Postgres restart or failover (or an operator's `pg_terminate_backend`) ends the service's
 * connections with `FATAL 57P01 terminating connection due to administrator command` while their
 * statements run: that request is a dependency outage (503 `service_unavailable` with Retry-After,
 * README "Outages"), not a 500, it writes nothing, and the pool serves the next request on a new
 * connection. The statements are held in flight by a lock this test holds, so the termination meets
 * them mid-transaction; the deadline is long enough that only the termination ends them.
 */
describe('a service whose Postgres connection is terminated mid-statement', () => {
  let stack: TestStack;
  let api: ApiClient;
  let org: Awaited<ReturnType<typeof newOrg>>;
  let admin: pg.Client;

  const databaseOf = (variable: string) => new URL(stack.env[variable]).pathname.slice(1);

  /** A connection to one of the stack's databases (not through the services), to hold a lock there. */
  const connect = async (variable: string) => {
    const url = postgresServerUrl();
    url.pathname = `/${databaseOf(variable)}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    return client;
  };

  /** Terminates the service's connection that waits for the lock, as a restarting server terminates it. */
  const terminateWaiting = (variable: string) =>
    waitFor(
      'a statement waiting for the held lock',
      async () => {
        const { rows } = await admin.query<{ terminated: boolean }>(
          `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
           WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
          [databaseOf(variable)],
        );
        return rows.some((row) => row.terminated) ? true : undefined;
      },
      { intervalMs: 20 },
    );

  /**
   * Sends `request` while a transaction of ours in the service's database holds what it needs (`hold`
   * takes it), terminates the service's waiting connection, and expects the cut request's 503.
   */
  const expect503WhenCut = async (
    variable: string,
    hold: (locker: pg.Client) => Promise<unknown>,
    request: () => Promise<Answer<unknown>>,
  ) => {
    const locker = await connect(variable);
    try {
      await locker.query('BEGIN');
      await hold(locker);
      const answer = request();
      await terminateWaiting(variable);
      const cut = await answer;
      expectProblem(cut, 503, 'service_unavailable');
      expect(Number(cut.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  };

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1', GRPC_DEADLINE_MS: '15000' },
    });
    api = new ApiClient(stack.url(''));
    org = await newOrg(api, stack, 'terminated');
    admin = new pg.Client({ connectionString: postgresServerUrl().toString() });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await stack?.close();
  });

  it('answers a user creation cut mid-transaction 503 with Retry-After, creates nothing, and the retry creates the user once', async () => {
    const email = uniqueEmail('cut');
    const key = randomUUID();
    const create = () =>
      api.createUser(
        org.clientToken,
        { email, display_name: 'Cut', send_activation: false },
        { headers: { 'idempotency-key': key } },
      );
    // The creation's transaction begins with the org's Users-quota lock: held here, it waits there.
    await expect503WhenCut(
      'IDENTITY_DATABASE_URL',
      (locker) => locker.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`users-quota:${org.org_id}`]),
      create,
    );
    const listed = await api.call<{ items: Array<{ email: string }> }>(`/v2/users?q=${encodeURIComponent(email)}`, {
      token: org.admin.access_token,
    });
    expect(listed.body.items).toEqual([]);
    const retried = await create();
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const again = await api.call<{ items: Array<{ id: string }> }>(`/v2/users?q=${encodeURIComponent(email)}`, {
      token: org.admin.access_token,
    });
    expect(again.body.items.map((user) => user.id)).toEqual([retried.body.id]);
  });

  it('answers a password grant cut mid-statement 503 with Retry-After, and the next one is served', async () => {
    const ip = '192.0.2.57';
    const grant = () =>
      api.tokenRequest({ grant_type: 'password', username: org.adminEmail, password: org.adminPassword }, { ip });
    // The login's first statement upserts its (user, IP) lockout row: a row inserted here and not yet
    // committed makes it wait.
    await expect503WhenCut(
      'AUTH_DATABASE_URL',
      (locker) =>
        locker.query(
          `INSERT INTO login_throttles (username, client_ip, attempts, window_started_at) VALUES ($1, $2, 0, now())`,
          [`user:${org.admin_user_id}`, ip],
        ),
      grant,
    );
    expect((await grant()).status).toBe(200);
  });
});
