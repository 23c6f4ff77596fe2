import { GATEWAY_CLIENT_ID } from '@acct/access-token';
import { DEV_GATEWAY_CLIENT_SECRET } from '@acct/config';
import { callRaw, createRawClient, grpcFailureToDomainError } from '@acct/grpc';
import {
  ApiClient,
  Bootstrap,
  bootstrapOrg,
  LocalObjectStorage,
  raiseLimit,
  request,
  setRateLimit,
  SmtpCatcher,
  TestStack,
  waitFor,
} from '@acct/testing';
import { Metadata } from '@grpc/grpc-js';
import pg from 'pg';

/**
 * Issue 6 item 5: two instances of the gateway and of every service against the same databases,
 * Redis and NATS; each gateway reaches the services round-robin (`*_GRPC_ADDR` lists both
 * instances) and the test alternates between the gateways. What must stay exact does.
 */
describe('scale-out: two of everything', () => {
  let stack: TestStack;
  let storage: LocalObjectStorage;
  let smtp: SmtpCatcher;
  let org: Bootstrap;
  let gateways: string[];
  let ipCounter = 0;
  const freshIp = () => `198.51.100.${(ipCounter += 1)}`;
  const via = (index: number, path: string) => `${gateways[index % gateways.length]}${path}`;

  const clientToken = async (gateway = 0) =>
    (await new ApiClient(via(gateway, '')).clientToken(org, { ip: freshIp() })).access_token;
  const query = async <T extends pg.QueryResultRow>(database: string, sql: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      return (await client.query<T>(sql, values)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    [storage, smtp] = await Promise.all([LocalObjectStorage.start(), SmtpCatcher.start()]);
    stack = await TestStack.start({
      instances: 2,
      s3Endpoint: storage.endpoint,
      env: {
        SMTP_URL: smtp.url,
        TRUSTED_PROXIES: '127.0.0.1',
        REFRESH_GRACE_SECONDS: '2',
        // Ten processes on a small shared machine: this test is about exactness, not latency, so a
        // slow answer must not count as an outage (Redis fallback, 503, a service reported down).
        GRPC_DEADLINE_MS: '15000',
        RATE_LIMIT_REDIS_TIMEOUT_MS: '5000',
        HEALTH_PROBE_TIMEOUT_MS: '3000',
      },
    });
    gateways = stack.gatewayUrls();
    org = bootstrapOrg(stack, 'scaled', 'admin@scaled.test', 'admin-pass-1');
    // system.read: capacity 10 (6/min × burst 100), one token every 10 s: nothing refills mid-test.
    setRateLimit(stack, org.org_id, 'system.read', { ratePerMinute: 6, burst: 100 });
    raiseLimit(stack, org.org_id, 'users.write');
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await Promise.all([storage?.dispose(), smtp?.close()]);
  });

  it('runs two of every process, and both gateways answer from round-robin backends', async () => {
    expect(gateways).toHaveLength(2);
    expect(stack.replicas.map((replica) => replica.app).sort()).toEqual([
      'auth',
      'gateway',
      'identity',
      'mailer',
      'platform',
    ]);
    expect(stack.env.IDENTITY_GRPC_ADDR.split(',')).toHaveLength(2);
    for (const gateway of gateways) {
      await waitFor(
        `${gateway} healthy`,
        async () => {
          const health = await request<{ status: string }>(`${gateway}/v2/system/health`);
          return health.status === 200 && health.body.status === 'healthy' ? true : undefined;
        },
        { timeoutMs: 60_000 },
      );
    }
  });

  it('gives a rate-limit bucket exactly its capacity across both gateways', async () => {
    const token = await clientToken();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) => request(via(index, '/v2/system/rate-limits'), { token })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
  });

  it('keeps the health bucket of an address in each gateway: drained at one, the other answers from a full one', async () => {
    const ip = freshIp();
    const health = (gateway: number) =>
      fetch(via(gateway, '/v2/system/health'), { headers: { 'x-forwarded-for': ip } });
    // 600/min with burst 10: a capacity of 100, one token back every 100 ms.
    const drained = await Promise.all(Array.from({ length: 150 }, () => health(0)));
    expect(drained.filter((response) => response.status === 429).length).toBeGreaterThan(0);
    const other = await health(1);
    expect(other.status).not.toBe(429);
    expect(other.headers.get('x-ratelimit-limit')).toBe('100');
    expect(other.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('creates one user per Idempotency-Key sent concurrently to both gateways, and both get its response', async () => {
    const token = await clientToken();
    for (let round = 0; round < 8; round += 1) {
      const key = `scale-${Date.now()}-${round}`;
      const body = { email: `twice-${round}-${Date.now()}@scaled.test`, display_name: 'Twice', send_activation: false };
      const send = (gateway: number) =>
        request<{ id: string; code?: string }>(via(gateway, '/v2/users'), {
          token,
          body,
          headers: { 'idempotency-key': key },
        });
      let answers: Array<Awaited<ReturnType<typeof send>>> = await Promise.all([send(0), send(1)]);
      for (const answer of answers) expect([201, 409]).toContain(answer.status);
      const conflicts = answers.filter((answer) => answer.status === 409);
      for (const conflict of conflicts) expect(conflict.body.code).toBe('idempotency_key_in_use');
      // A client retries a 409 in_use; once the first request finished, every gateway replays it.
      answers = await Promise.all(
        answers.map((answer, gateway) =>
          answer.status === 201
            ? Promise.resolve(answer)
            : waitFor('the replay', async () => {
                const again = await send(gateway);
                return again.status === 201 ? again : undefined;
              }),
        ),
      );
      expect(answers[0].body).toEqual(answers[1].body);
      expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
      const rows = await query<{ count: string }>(
        stack.env.IDENTITY_DATABASE_URL,
        'SELECT count(*) FROM users WHERE email_normalized = $1',
        [body.email],
      );
      expect(rows[0].count).toBe('1');
    }
  });

  it('honours a refresh token used concurrently through both gateways once, then revokes the family on reuse', async () => {
    const login = await request<{ refresh_token: string }>(via(0, '/v2/auth/token'), {
      body: { grant_type: 'password', username: 'admin@scaled.test', password: 'admin-pass-1' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(login.status).toBe(200);
    const refresh = (gateway: number, token: string) =>
      request<{ refresh_token?: string; code?: string; error?: string }>(via(gateway, '/v2/auth/token'), {
        body: { grant_type: 'refresh_token', refresh_token: token },
        headers: { 'x-forwarded-for': freshIp() },
      });
    const used = await Promise.all([refresh(0, login.body.refresh_token), refresh(1, login.body.refresh_token)]);
    // Within the grace window both uses are honoured (contract §4), each with a new family member,
    // and the first use is recorded once for the family, whichever instance saw it first.
    expect(used.map((answer) => answer.status)).toEqual([200, 200]);
    const [first, second] = used.map((answer) => answer.body.refresh_token!);
    expect(first).not.toBe(second);
    const family = await query<{ parent_id: string | null; first_used_at: Date | null }>(
      stack.env.AUTH_DATABASE_URL,
      'SELECT parent_id, first_used_at FROM refresh_tokens WHERE user_id = $1',
      [org.admin_user_id],
    );
    expect(family).toHaveLength(3);
    const root = family.filter((row) => row.parent_id === null);
    expect(root).toHaveLength(1);
    expect(root[0].first_used_at).not.toBeNull();
    // After the grace window (2 s here) the used token is theft, whichever gateway it reaches.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const reused = await refresh(1, login.body.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    for (const [gateway, token] of [
      [0, first],
      [1, second],
    ] as const) {
      expect((await refresh(gateway, token)).body.error).toBe('invalid_grant');
    }
  });

  it('lets 20 parallel wrong passwords over both gateways through to auth no more than the auth tier allows', async () => {
    const ip = freshIp();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        request<{ code: string }>(via(index, '/v2/auth/token'), {
          body: { grant_type: 'password', username: 'admin@scaled.test', password: 'wrong-pass-1' },
          headers: { 'x-forwarded-for': ip },
        }),
      ),
    );
    // The auth tier (10/min × burst 20 → capacity 3, per IP) is shared through Redis.
    const codes = answers.map((answer) => answer.body.code).sort();
    expect(codes.filter((code) => code === 'invalid_grant')).toHaveLength(3);
    expect(codes.filter((code) => code === 'rate_limited')).toHaveLength(17);
  });

  it('checks no more than 5 of 20 parallel wrong passwords for one (username, IP) across both auth instances', async () => {
    // Straight to the auth instances, round-robin (the gateways' auth tier would stop this IP after
    // 3), as the gateway calls them (its own token: only it may name the client's IP): the lockout
    // row in the shared database, not any one process, decides.
    const auth = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', stack.env.AUTH_GRPC_ADDR);
    try {
      const { accessToken } = await callRaw<Record<string, string>, { accessToken: string }>(
        auth,
        'issueToken',
        {
          grantType: 'client_credentials',
          clientId: GATEWAY_CLIENT_ID,
          clientSecret: stack.env.GATEWAY_CLIENT_SECRET ?? DEV_GATEWAY_CLIENT_SECRET,
        },
        10_000,
      );
      const asGateway = new Metadata();
      asGateway.set('authorization', `Bearer ${accessToken}`);
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () =>
          callRaw(
            auth,
            'issueToken',
            { grantType: 'password', username: 'admin@scaled.test', password: 'wrong-pass-1', clientIp: '192.0.2.77' },
            10_000,
            asGateway,
          ).then(
            () => 'issued',
            (failure: unknown) => grpcFailureToDomainError(failure, 'auth').code as string,
          ),
        ),
      );
      expect(outcomes.filter((code) => code === 'invalid_grant')).toHaveLength(5);
      expect(outcomes.filter((code) => code === 'login_locked')).toHaveLength(15);
      const right = await request<{ code: string }>(via(1, '/v2/auth/token'), {
        body: { grant_type: 'password', username: 'admin@scaled.test', password: 'admin-pass-1' },
        headers: { 'x-forwarded-for': '192.0.2.77' },
      });
      expect(right.status).toBe(429);
      expect(right.body.code).toBe('login_locked');
    } finally {
      auth.close();
    }
  });

  it('spreads the calls of the tests above over both instances of every gRPC service', async () => {
    const handled = async (opsPort: number, service: string) => {
      const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
      return text
        .split('\n')
        .filter((line) => line.startsWith('grpc_server_handled_total{') && line.includes(`grpc_service="${service}`))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    };
    for (const [app, service] of [
      ['identity', 'identity.v1.IdentityService'],
      ['auth', 'auth.v1.AuthService'],
      ['platform', 'platform.v1.PlatformService'],
    ] as const) {
      const replica = stack.replicas.find((candidate) => candidate.app === app)!;
      expect(await handled(stack.ports.ops[app], service)).toBeGreaterThan(0);
      expect(await handled(replica.ops, service)).toBeGreaterThan(0);
    }
  });

  it('sends each activation e-mail exactly once with two mailers', async () => {
    const token = await clientToken();
    const addresses = Array.from({ length: 12 }, (_, index) => `mail-${index}-${Date.now()}@scaled.test`);
    const created = await Promise.all(
      addresses.map((email, index) =>
        request(via(index, '/v2/users'), { token, body: { email, display_name: 'Mail' } }),
      ),
    );
    for (const answer of created) expect(answer.status).toBe(201);
    await waitFor(
      'every e-mail',
      () => (addresses.every((address) => smtp.to(address).length > 0) ? true : undefined),
      { timeoutMs: 60_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const address of addresses) expect(smtp.to(address)).toHaveLength(1);
  });
});
