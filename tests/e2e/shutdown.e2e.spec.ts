import net from 'node:net';

import {
  ApiClient,
  AppName,
  bootstrapOrg,
  expectProblem,
  raiseLimit,
  request,
  TestStack,
  waitFor,
} from '@acct/testing';

const ADMIN_PASSWORD = 'shutdown-admin-pass-1';
const IN_FLIGHT = 4;

/** True when nothing listens on the port any more (the kernel refuses the connection). */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * Issue 6 item 7: on SIGTERM a process turns unready, refuses new connections, finishes every request
 * in flight and exits 0. Requests are held in flight by freezing identity (SIGSTOP) behind them.
 */
describe('graceful shutdown on SIGTERM', () => {
  let stack: TestStack;
  let adminToken: string;
  let address = 0;
  const clientIp = () => `198.51.100.${(address = (address % 250) + 1)}`;

  const gauge = async (app: AppName, name: string) => {
    const metrics = await (await fetch(stack.opsUrl(app, '/metrics'))).text();
    return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  };
  const waitForGauge = (app: AppName, name: string, atLeast: number) =>
    waitFor(`${app} ${name} ≥ ${atLeast}`, async () => ((await gauge(app, name)) >= atLeast ? true : undefined));

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: {
        TRUSTED_PROXIES: '127.0.0.1',
        // Calls wait for the frozen identity instead of failing with 503 after the usual 2 s.
        GRPC_DEADLINE_MS: '60000',
        RATE_LIMIT_TIERS_TTL_MS: '600000',
      },
    });
    const org = bootstrapOrg(stack, 'shutdown-org', 'admin@shutdown.test', ADMIN_PASSWORD);
    raiseLimit(stack, org.org_id, 'users.read');
    const api = new ApiClient(stack.url(''));
    adminToken = (await api.passwordToken('admin@shutdown.test', ADMIN_PASSWORD, { ip: clientIp() })).access_token;
    // Warm the gateway's caches (signing keys, the org's tiers) while everything answers.
    expect((await request(stack.url('/v2/users/me'), { token: adminToken })).status).toBe(200);
  });

  afterAll(async () => {
    stack?.signalApp('identity', 'SIGCONT');
    await stack?.close();
  });

  it('the gateway turns unready, refuses new connections, answers every request in flight and exits 0', async () => {
    stack.signalApp('identity', 'SIGSTOP');
    const inFlight = Array.from({ length: IN_FLIGHT }, () =>
      request<{ email: string }>(stack.url('/v2/users/me'), { token: adminToken }),
    );
    await waitForGauge('gateway', 'http_requests_in_flight', IN_FLIGHT);
    expect((await fetch(stack.opsUrl('gateway', '/readyz'))).status).toBe(200);

    const exit = stack.terminateApp('gateway');
    await waitFor('gateway /readyz 503', async () =>
      (await fetch(stack.opsUrl('gateway', '/readyz'))).status === 503 ? true : undefined,
    );
    await waitFor('the public port to refuse connections', async () =>
      (await refusesConnections(stack.ports.http)) ? true : undefined,
    );

    stack.signalApp('identity', 'SIGCONT');
    const answers = await Promise.all(inFlight);
    expect(answers.map((answer) => [answer.status, answer.body.email])).toEqual(
      Array.from({ length: IN_FLIGHT }, () => [200, 'admin@shutdown.test']),
    );
    expect(await exit).toEqual({ code: 0, signal: null });
    expect(await refusesConnections(stack.ports.http)).toBe(true);

    await stack.startApp('gateway');
  });

  it('the gateway refuses a request that arrives while it drains with 503 problem+json, its request id and Retry-After', async () => {
    // A client on an open connection whose request is still arriving when SIGTERM comes: the
    // connection is not idle, so it stays open, and the request is complete only once drain began.
    const socket = net.connect(stack.ports.http, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let raw = '';
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('GET /v2/system/health HTTP/1.1\r\nHost: gateway\r\nX-Request-Id: late-during-drain\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));

    const exit = stack.terminateApp('gateway');
    await waitFor('gateway /readyz 503', async () =>
      (await fetch(stack.opsUrl('gateway', '/readyz'))).status === 503 ? true : undefined,
    );
    socket.write('\r\n');
    await closed;
    const exited = await exit;
    await stack.startApp('gateway');

    const [head = '', text = ''] = raw.split('\r\n\r\n');
    const [statusLine = '', ...headerLines] = head.split('\r\n');
    const headers = new Headers(
      headerLines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
    );
    const answer = { status: Number(statusLine.split(' ')[1]), headers, text, body: JSON.parse(text) as unknown };
    expect(expectProblem(answer, 503, 'service_unavailable').request_id).toBe('late-during-drain');
    expect(Number(headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(headers.get('connection')).toBe('close');
    expect(exited).toEqual({ code: 0, signal: null });
  });

  it('the gateway does not wait for a client that stopped sending its request: it answers 408 and exits 0 within the grace', async () => {
    // Node stops timing requests out once the server closes: one client stalled in its headers and
    // one in its body held the drain until the grace ran out, and the gateway exited 1 with its
    // access log and connections unclosed.
    const stalled = (head: string) => {
      const socket = net.connect(stack.ports.http, '127.0.0.1');
      let raw = '';
      socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(raw)));
      socket.write(head);
      return closed;
    };
    const inBody = stalled(
      'POST /v2/auth/token HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"grant_',
    );
    const inHeaders = stalled('GET /v2/system/health HTTP/1.1\r\nHost: gateway\r\nX-Request');
    await waitForGauge('gateway', 'http_requests_in_flight', 1);
    // Past its rate limit, before the drain: it is in flight, not refused as arriving during the drain.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const started = Date.now();
    const exited = await stack.terminateApp('gateway');
    const elapsed = Date.now() - started;
    const answers = await Promise.all([inBody, inHeaders]);
    await stack.startApp('gateway');

    expect(exited).toEqual({ code: 0, signal: null });
    // Ended at half the grace (SHUTDOWN_GRACE_MS, 20 s), well before the grace is over.
    expect(elapsed).toBeLessThan(15_000);
    expect(answers.map((raw) => raw.split('\r\n')[0])).toEqual([
      'HTTP/1.1 408 Request Timeout',
      'HTTP/1.1 408 Request Timeout',
    ]);
  });

  it('a backend service refuses new connections, finishes the calls in flight and exits 0', async () => {
    // Password grants wait in auth for identity's password check while identity is frozen.
    stack.signalApp('identity', 'SIGSTOP');
    const inFlight = Array.from({ length: IN_FLIGHT }, () =>
      request<{ access_token?: string }>(stack.url('/v2/auth/token'), {
        body: { grant_type: 'password', username: 'admin@shutdown.test', password: ADMIN_PASSWORD },
        headers: { 'x-forwarded-for': clientIp() },
      }),
    );
    await waitForGauge('auth', 'grpc_server_in_flight', IN_FLIGHT);

    const exit = stack.terminateApp('auth');
    await waitFor('auth /readyz 503', async () =>
      (await fetch(stack.opsUrl('auth', '/readyz'))).status === 503 ? true : undefined,
    );
    await waitFor('auth’s gRPC port to refuse connections', async () =>
      (await refusesConnections(stack.ports.grpc.auth!)) ? true : undefined,
    );

    stack.signalApp('identity', 'SIGCONT');
    const answers = await Promise.all(inFlight);
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: IN_FLIGHT }, () => 200));
    for (const answer of answers) expect(answer.body.access_token).toEqual(expect.any(String));
    expect(await exit).toEqual({ code: 0, signal: null });

    // Started again, it serves as before once the gateway's channel has reconnected (its reconnect
    // back-off is at most 2 s; until then a call fails fast with 503 rather than queueing).
    await stack.startApp('auth');
    const again = await waitFor(
      'a token from the restarted auth',
      async () => {
        const answer = await request(stack.url('/v2/auth/token'), {
          body: { grant_type: 'password', username: 'admin@shutdown.test', password: ADMIN_PASSWORD },
          headers: { 'x-forwarded-for': clientIp() },
        });
        return answer.status === 503 ? undefined : answer;
      },
      { timeoutMs: 5_000 },
    );
    expect(again.status).toBe(200);
  });
});
