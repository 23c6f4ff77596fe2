import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  APPS,
  DedicatedServer,
  HealthReport,
  LocalObjectStorage,
  packageVersion,
  repositoryRoot,
  TcpProxy,
  TestStack,
  waitFor,
} from '@acct/testing';

describe('GET /v2/system/health against the real dependencies', () => {
  let stack: TestStack;
  let redis: DedicatedServer;
  let nats: DedicatedServer;
  let storage: LocalObjectStorage;
  let postgres: TcpProxy;
  let natsDir: string;

  const health = async () => {
    const response = await fetch(stack.url('/v2/system/health'));
    return { response, body: (await response.json()) as HealthReport };
  };
  const componentStatus = (report: HealthReport, component: string) =>
    report.checks.find((check) => check.component === component)?.status;
  const waitForHealth = (what: string, predicate: (report: HealthReport, status: number) => boolean) =>
    waitFor(what, async () => {
      const { response, body } = await health();
      return predicate(body, response.status) ? { response, body } : undefined;
    });

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-'));
    [redis, nats, storage, postgres] = await Promise.all([
      DedicatedServer.redis(),
      DedicatedServer.nats(natsDir),
      LocalObjectStorage.start(),
      TcpProxy.start(5432),
    ]);
    stack = await TestStack.start({
      postgresPort: postgres.port,
      redisUrl: redis.url,
      natsUrl: nats.url,
      s3Endpoint: storage.endpoint,
    });
  });

  afterAll(async () => {
    await stack?.close();
    await Promise.all([redis?.stop(), nats?.stop(), storage?.dispose(), postgres?.cut()]);
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  it('reports healthy with every field of the contract', async () => {
    const { response, body } = await waitForHealth('healthy', (report) => report.status === 'healthy');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(body).sort()).toEqual(['checks', 'region', 'status', 'uptime_seconds', 'version']);
    expect(body.version).toBe(packageVersion);
    expect(body.version).toMatch(/^\d+(\.\d+)+$/);
    expect(body.region).toBe('test-region-1');
    expect(Number.isInteger(body.uptime_seconds)).toBe(true);
    expect(body.uptime_seconds).toBeGreaterThanOrEqual(0);
    expect(body.checks.map((check) => check.component).sort()).toEqual(
      ['auth', 'cache', 'database', 'identity', 'message_bus', 'object_storage', 'platform'].sort(),
    );
    for (const check of body.checks) {
      expect(Object.keys(check).sort()).toEqual(['component', 'latency_ms', 'status']);
      expect(check.status).toBe('up');
      expect(typeof check.latency_ms).toBe('number');
      expect(Number.isFinite(check.latency_ms)).toBe(true);
      expect(check.latency_ms).toBeGreaterThanOrEqual(0);
    }
    // Decimal latencies: measured to sub-millisecond precision, not rounded to whole milliseconds.
    expect(body.checks.some((check) => !Number.isInteger(check.latency_ms))).toBe(true);
  });

  it('counts uptime in real seconds', async () => {
    const before = (await health()).body.uptime_seconds;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const after = (await health()).body.uptime_seconds;
    expect(after - before).toBeGreaterThanOrEqual(2);
    expect(after - before).toBeLessThanOrEqual(4);
  });

  it('echoes a sane X-Request-Id and replaces an insane one', async () => {
    const mine = await fetch(stack.url('/v2/system/health'), { headers: { 'X-Request-Id': 'probe-123' } });
    expect(mine.headers.get('x-request-id')).toBe('probe-123');
    const bad = await fetch(stack.url('/v2/system/health'), { headers: { 'X-Request-Id': 'no spaces <allowed>' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('does not check a bearer token (interface §4.3): one naming a key auth never published waits for no key fetch', async () => {
    // A verifier fetches the keys for such a token, at most once a second: each request waited for that.
    const naming = (kid: string) =>
      `${Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid })).toString('base64url')}.e30.c2ln`;
    const started = Date.now();
    for (let index = 0; index < 5; index += 1) {
      const response = await fetch(stack.url('/v2/system/health'), {
        headers: { authorization: `Bearer ${naming(`retired-${index}`)}` },
      });
      expect(response.status).toBe(200);
    }
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('writes an access log line for a request, with its route, status, duration, request id and client', async () => {
    // A probe answered 200 gets no line (health/answered-probe.ts); the request after it does.
    await fetch(stack.url('/v2/system/health'), { headers: { 'X-Request-Id': 'quiet-probe-1' } });
    await fetch(stack.url('/v2/auth/jwks'), { headers: { 'X-Request-Id': 'access-log-1' } });
    const log = path.join(repositoryRoot, '.data/test-logs', `${stack.ports.http}-gateway.log`);
    const accessLines = () =>
      fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter((text) => text.includes('"kind":"access"'))
        .map((text) => JSON.parse(text) as Record<string, unknown>);
    const line = await waitFor('the access log line', () =>
      accessLines().find((entry) => entry.request_id === 'access-log-1'),
    );
    expect(line).toMatchObject({
      method: 'GET',
      route: '/v2/auth/jwks',
      status: 200,
      duration_ms: expect.any(Number),
      client_address: '127.0.0.1',
    });
    // Lines are written in the order the answers went out: the probe's would be there by now.
    expect(accessLines().filter((entry) => entry.request_id === 'quiet-probe-1')).toEqual([]);
  });

  it('is degraded (200) while the cache is down, and healthy again when it returns', async () => {
    await redis.stop();
    const degraded = await waitForHealth('cache down', (report) => componentStatus(report, 'cache') === 'down');
    expect(degraded.response.status).toBe(200);
    expect(degraded.body.status).toBe('degraded');
    await redis.start();
    await waitForHealth('cache back', (report) => report.status === 'healthy');
  });

  it('is degraded (200) while object storage is down', async () => {
    await storage.stop();
    const degraded = await waitForHealth(
      'storage down',
      (report) => componentStatus(report, 'object_storage') === 'down',
    );
    expect(degraded.response.status).toBe(200);
    expect(degraded.body.status).toBe('degraded');
    await storage.resume();
    await waitForHealth('storage back', (report) => report.status === 'healthy');
  });

  it('is degraded (200) while the message bus is down', async () => {
    await nats.stop();
    const degraded = await waitForHealth('bus down', (report) => componentStatus(report, 'message_bus') === 'down');
    expect(degraded.response.status).toBe(200);
    expect(degraded.body.status).toBe('degraded');
    await nats.start();
    await waitForHealth('bus back', (report) => report.status === 'healthy');
  });

  it('is down (503) while the database is unreachable, and every /livez stays 200', async () => {
    await postgres.cut();
    const down = await waitForHealth('database down', (report) => componentStatus(report, 'database') === 'down');
    expect(down.response.status).toBe(503);
    expect(down.body.status).toBe('down');
    expect(down.response.headers.get('content-type')).toMatch(/^application\/json/);
    for (const app of APPS) {
      const live = await fetch(stack.opsUrl(app, '/livez'));
      expect(live.status).toBe(200);
    }
    const notReady = await fetch(stack.opsUrl('identity', '/readyz'));
    expect(notReady.status).toBe(503);
    await postgres.resume();
    await waitForHealth('database back', (report) => report.status === 'healthy');
  });

  it('is down (503) when a backend service stops, and answers quickly', async () => {
    await stack.stopApp('auth');
    const down = await waitForHealth('auth down', (report) => componentStatus(report, 'auth') === 'down');
    expect(down.response.status).toBe(503);
    expect(down.body.status).toBe('down');
    await stack.startApp('auth');
    await waitForHealth('auth back', (report) => report.status === 'healthy');
  });

  it('answers 503 down at once when the platform service itself is gone', async () => {
    await stack.stopApp('platform');
    const started = Date.now();
    const { response, body } = await health();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(response.status).toBe(503);
    expect(body.status).toBe('down');
    // Contract §5: checks[] names at least database, cache and object_storage, even when nothing could measure them.
    expect(body.checks.map((check: { component: string }) => check.component).sort()).toEqual(
      ['auth', 'cache', 'database', 'identity', 'message_bus', 'object_storage', 'platform'].sort(),
    );
    expect(body.checks.every((check: { status: string }) => check.status === 'down')).toBe(true);
    await stack.startApp('platform');
    await waitForHealth('platform back', (report) => report.status === 'healthy');
  });

  it('serves /livez, /readyz and Prometheus /metrics on every ops port', async () => {
    for (const app of APPS) {
      expect((await fetch(stack.opsUrl(app, '/livez'))).status).toBe(200);
      expect((await fetch(stack.opsUrl(app, '/readyz'))).status).toBe(200);
      const metrics = await fetch(stack.opsUrl(app, '/metrics'));
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await metrics.text()).toContain(`process_cpu_user_seconds_total{service="${app}"}`);
    }
  });
});
