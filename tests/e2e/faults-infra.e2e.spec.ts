import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  DedicatedServer,
  Fault,
  FaultObservation,
  faultViolations,
  HealthStatus,
  LocalObjectStorage,
  lostOrDoubledWrites,
  postgresServerUrl,
  recoveryTable,
  request,
  runFault,
  SmtpCatcher,
  SteadyLoad,
  TcpProxy,
  TestStack,
  waitFor,
} from '@acct/testing';

interface Bootstrap {
  org_id: string;
  admin_user_id: string;
  client_id: string;
  client_secret: string;
}

/** GRPC_DEADLINE_MS (2 s) plus room for this shared 2-core machine: no request may take longer. */
const ANSWER_DEADLINE_MS = 6000;

/**
 * Issue 6 item 4, the infrastructure: Postgres (behind a TCP proxy), Redis, NATS and object storage,
 * each stopped, hung and restarted while a steady load runs. During the fault the documented
 * behaviour (README "Outages"); afterwards automatic recovery, no lost writes, no duplicate users or
 * e-mails; the time to recover is printed.
 */
describe('faults: Postgres, Redis, NATS, object storage under a steady load', () => {
  let stack: TestStack;
  let postgres: TcpProxy;
  let redis: DedicatedServer;
  let nats: DedicatedServer;
  let natsDir: string;
  let storage: LocalObjectStorage;
  let s3: TcpProxy;
  let smtp: SmtpCatcher;
  let org: Bootstrap;
  let load: SteadyLoad;
  const observations: FaultObservation[] = [];

  let probes = 0;
  /** A token grant and an authenticated read (a fresh client address each time: the auth tier is per IP). */
  const probe = async () => {
    probes += 1;
    const token = await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret },
      headers: { 'x-forwarded-for': `172.16.${(probes >> 8) & 255}.${probes & 255}` },
    }).catch(() => undefined);
    if (token?.status !== 200) return false;
    const read = await request(stack.url(`/v2/users/${org.admin_user_id}`), { token: token.body.access_token });
    return read.status === 200;
  };

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'faults-nats-'));
    [redis, nats, storage, smtp, postgres] = await Promise.all([
      DedicatedServer.redis(),
      DedicatedServer.nats(natsDir),
      LocalObjectStorage.start(),
      SmtpCatcher.start(),
      TcpProxy.start(Number(postgresServerUrl().port || 5432)),
    ]);
    s3 = await TcpProxy.start(storage.port);
    stack = await TestStack.start({
      postgresPort: postgres.port,
      redisUrl: redis.url,
      natsUrl: nats.url,
      s3Endpoint: `http://127.0.0.1:${s3.port}`,
      env: { SMTP_URL: smtp.url, TRUSTED_PROXIES: '127.0.0.1' },
    });
    org = stack.cliDirect<Bootstrap>(
      'bootstrap',
      '--org',
      'faulty',
      '--email',
      'admin@faulty.test',
      '--password',
      'admin-pass-1',
    );
    for (const group of ['users.write', 'users.read']) {
      stack.cliDirect(
        'set-rate-limit',
        ...['--org-id', org.org_id, '--group', group, '--rate-per-minute', '60000', '--burst', '10'],
        ...['--scope', 'per-token'],
      );
    }
    stack.cliDirect('set-quota', '--org-id', org.org_id, '--dimension', 'api', '--name', 'Users', '--limit', '100000');
    await waitFor('a healthy stack', async () =>
      (await request<{ status: string }>(stack.url('/v2/system/health'))).body.status === 'healthy' ? true : undefined,
    );
    load = new SteadyLoad({
      gateways: [stack.url('')],
      clientId: org.client_id,
      clientSecret: org.client_secret,
      readUserId: org.admin_user_id,
      emailDomain: 'faulty.test',
    });
    load.start();
    await waitFor('the load under way', () =>
      load.creations.filter((creation) => creation.id).length >= 3 ? true : undefined,
    );
  }, 180_000);

  afterAll(async () => {
    await load?.stop();
    await stack?.close();
    await Promise.all([redis?.stop(), nats?.stop(), storage?.dispose(), smtp?.close(), postgres?.cut(), s3?.cut()]);
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  const matrix: Array<{ fault: Fault; health: HealthStatus; requestsMayFail: boolean }> = [
    // Postgres: every service's database. Health down (503 report), requests 503 within the deadline.
    {
      fault: { dependency: 'postgres', mode: 'stop', inject: () => postgres.cut(), heal: () => postgres.resume() },
      health: 'down',
      requestsMayFail: true,
    },
    {
      fault: { dependency: 'postgres', mode: 'hang', inject: () => postgres.hang(), heal: () => postgres.unhang() },
      health: 'down',
      requestsMayFail: true,
    },
    {
      fault: {
        dependency: 'postgres',
        mode: 'restart',
        inject: async () => {
          await postgres.cut(); // every connection dropped, as a server restart does to its clients
          await postgres.resume();
        },
        heal: () => undefined,
      },
      health: 'down',
      requestsMayFail: true,
    },
    // Redis: in-process rate limiting, health degraded, nothing fails.
    {
      fault: { dependency: 'redis', mode: 'stop', inject: () => redis.stop(), heal: () => redis.start() },
      health: 'degraded',
      requestsMayFail: false,
    },
    {
      fault: {
        dependency: 'redis',
        mode: 'hang',
        inject: () => redis.signal('SIGSTOP'),
        heal: () => redis.signal('SIGCONT'),
      },
      health: 'degraded',
      requestsMayFail: false,
    },
    {
      fault: {
        dependency: 'redis',
        mode: 'restart',
        inject: async () => {
          await redis.stop();
          await redis.start();
        },
        heal: () => undefined,
      },
      health: 'degraded',
      requestsMayFail: false,
    },
    // NATS: the outbox holds the events, health degraded, nothing fails; e-mails come later, once.
    {
      fault: { dependency: 'nats', mode: 'stop', inject: () => nats.stop(), heal: () => nats.start() },
      health: 'degraded',
      requestsMayFail: false,
    },
    {
      fault: {
        dependency: 'nats',
        mode: 'hang',
        inject: () => nats.signal('SIGSTOP'),
        heal: () => nats.signal('SIGCONT'),
      },
      health: 'degraded',
      requestsMayFail: false,
    },
    {
      fault: {
        dependency: 'nats',
        mode: 'restart',
        inject: async () => {
          await nats.stop();
          await nats.start();
        },
        heal: () => undefined,
      },
      health: 'degraded',
      requestsMayFail: false,
    },
    // Object storage: only the mailer's copies; health degraded, e-mails wait, nothing fails.
    {
      fault: { dependency: 'object storage', mode: 'stop', inject: () => s3.cut(), heal: () => s3.resume() },
      health: 'degraded',
      requestsMayFail: false,
    },
    {
      fault: { dependency: 'object storage', mode: 'hang', inject: () => s3.hang(), heal: () => s3.unhang() },
      health: 'degraded',
      requestsMayFail: false,
    },
    {
      fault: {
        dependency: 'object storage',
        mode: 'restart',
        inject: async () => {
          await storage.stop();
          await storage.resume();
        },
        heal: () => undefined,
      },
      health: 'degraded',
      requestsMayFail: false,
    },
  ];

  it.each(matrix.map((cell) => [`${cell.fault.dependency} ${cell.fault.mode}`, cell] as const))(
    '%s: documented behaviour during the fault, then recovery on its own',
    async (_name, { fault, health, requestsMayFail }) => {
      const observation = await runFault(fault, { gateway: stack.url(''), load, expectHealth: health, probe });
      observations.push(observation);
      if (fault.mode !== 'restart') expect(observation.healthSeen).toContain(health);
      expect(faultViolations(observation, { deadlineMs: ANSWER_DEADLINE_MS, requestsMayFail })).toEqual([]);
      if (requestsMayFail && fault.mode !== 'restart') {
        // The gateway answered 503 quickly rather than hanging.
        expect(observation.during.some((sample) => sample.status === 503 && sample.operation !== 'health')).toBe(true);
      }
    },
  );

  it('lost no write, created no user twice and sent every activation e-mail exactly once', async () => {
    await load.stop();
    await load.settle(90_000);
    expect(load.creations.length).toBeGreaterThan(0);
    const token = (
      await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
        body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret },
        headers: { 'x-forwarded-for': '192.0.2.201' },
      })
    ).body.access_token;
    const violations = await lostOrDoubledWrites(load, {
      gateway: stack.url(''),
      token,
      mailsTo: (address) => smtp.to(address).length,
    });
    expect(violations).toEqual([]);
    console.log(
      `faults (infrastructure): ${load.creations.length} users created under load, ${load.samples.length} requests\n${recoveryTable(observations)}`,
    );
  });
});
