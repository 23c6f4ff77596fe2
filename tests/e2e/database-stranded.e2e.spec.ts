import { ApiClient, bootstrapOrg, freshIp, postgresServerUrl, TcpProxy, TestStack, waitFor } from '@acct/testing';

/**
 * A failover or a network partition leaves the services' open Postgres connections stranded: the
 * old server never answers on them and never resets them, while new connections reach the database
 * again. Requests may fail meanwhile (503, README "Outages"), but the services recover on their own:
 * a statement on a stranded connection gives up, its connection is closed, and the next request is
 * served on a new one. (A connection that waited for ever kept its slot of the pool, and the login
 * audit's one writer, for ever: no restart, no recovery.)
 */
describe('a service whose Postgres connections are stranded', () => {
  let stack: TestStack;
  let postgres: TcpProxy;
  let api: ApiClient;
  let org: ReturnType<typeof bootstrapOrg>;
  const adminEmail = 'admin@stranded.test';
  const adminPassword = 'admin-password-1';

  beforeAll(async () => {
    postgres = await TcpProxy.start(Number(postgresServerUrl().port || 5432));
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      postgresPort: postgres.port,
      env: { TRUSTED_PROXIES: '127.0.0.1', DATABASE_QUERY_TIMEOUT_MS: '3000' },
    });
    api = new ApiClient(stack.url(''), { ip: freshIp });
    org = bootstrapOrg({ cli: stack.cliDirect.bind(stack) }, 'stranded', adminEmail, adminPassword);
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await postgres?.cut();
  });

  /** A user read (identity's database) and a password grant (auth's, its login audit included). */
  const serve = async () => {
    const login = await api.tokenRequest({ grant_type: 'password', username: adminEmail, password: adminPassword });
    if (login.status !== 200) return `token ${login.status} ${login.text.slice(0, 120)}`;
    const read = await api.call(`/v2/users/${org.admin_user_id}`, { token: login.body.access_token });
    return read.status === 200 ? 200 : `read ${read.status} ${read.text.slice(0, 120)}`;
  };

  it('serves again on new connections once the stranded ones are given up, without a restart', async () => {
    // Every connection of the pools in use, then stranded.
    expect(await Promise.all(Array.from({ length: 20 }, serve))).toEqual(Array(20).fill(200));
    postgres.strand();
    // Meanwhile a quick 503, never a 500.
    for (const answer of await Promise.all(Array.from({ length: 20 }, serve))) {
      expect(String(answer)).toMatch(/^(200|(token|read) 503 )/);
    }
    const started = Date.now();
    await waitFor(
      'a password grant and a user read served again',
      async () => {
        const statuses = await Promise.all(Array.from({ length: 5 }, serve));
        return statuses.every((status) => status === 200) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    console.log(`served again ${Date.now() - started} ms after the stranded connections' requests`);
  });
});
