import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  DedicatedServer,
  FaultCell,
  FaultSuite,
  LocalObjectStorage,
  postgresServerUrl,
  SmtpCatcher,
  TcpProxy,
  TestStack,
} from '@acct/testing';

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
  let suite: FaultSuite;

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
    suite = await FaultSuite.start(stack, { org: 'faulty', domain: 'faulty.test', direct: true });
  }, 180_000);

  afterAll(async () => {
    await suite?.load.stop();
    await stack?.close();
    await Promise.all([redis?.stop(), nats?.stop(), storage?.dispose(), smtp?.close(), postgres?.cut(), s3?.cut()]);
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  const matrix: FaultCell[] = [
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
      const { observation, violations } = await suite.run({ fault, health, requestsMayFail });
      if (fault.mode !== 'restart') expect(observation.healthSeen).toContain(health);
      expect(violations).toEqual([]);
      if (requestsMayFail && fault.mode !== 'restart') {
        // The gateway answered 503 quickly rather than hanging.
        expect(observation.during.some((sample) => sample.status === 503 && sample.operation !== 'health')).toBe(true);
      }
    },
  );

  it('lost no write, created no user twice and sent every activation e-mail exactly once', async () => {
    expect(await suite.lostOrDoubledWrites(smtp)).toEqual([]);
    expect(suite.load.creations.length).toBeGreaterThan(0);
    console.log(suite.summary('infrastructure'));
  });
});
