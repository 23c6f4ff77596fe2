import { ChildProcess, spawn } from 'node:child_process';

import { DedicatedServer, freePort, waitFor } from '@acct/testing';
import Redis from 'ioredis';
import { connect } from 'nats';

import { loadPlatformConfig } from '../config';
import { HealthMonitor } from './health-monitor.service';
import { CacheProbe, MessageBusProbe, Probe } from './probes';

describe('CacheProbe against a Redis of its own', () => {
  let server: DedicatedServer;
  let probe: CacheProbe;

  beforeAll(async () => {
    server = await DedicatedServer.redis();
    probe = new CacheProbe(server.url, 1000);
  });

  afterAll(async () => {
    probe.close();
    await server.stop();
  });

  it('reports the cache up from its first probe, made while its connection is still opening', async () => {
    // The platform's first round runs as it starts, right after the probe was made.
    const fresh = new CacheProbe(server.url, 1000);
    try {
      await expect(fresh.run()).resolves.toBeUndefined();
    } finally {
      fresh.close();
    }
  });

  it('reports the cache up while it takes writes', async () => {
    await expect(probe.run()).resolves.toBeUndefined();
  });

  it('reports the cache down while it answers PING but refuses writes (a primary turned replica by a failover)', async () => {
    const admin = new Redis(server.url);
    try {
      // Its primary is gone: PING still answers PONG, every bucket, count and revocation write is READONLY.
      await admin.replicaof('127.0.0.1', await freePort());
      await expect(admin.set('rl:{probe}', '1')).rejects.toThrow(/READONLY/);
      await expect(probe.run()).rejects.toThrow(/READONLY/);
      await admin.replicaof('NO', 'ONE');
      await expect(probe.run()).resolves.toBeUndefined();
    } finally {
      await admin.quit();
    }
  });
});

describe('HealthMonitor on shutdown', () => {
  let server: DedicatedServer;

  beforeAll(async () => {
    server = await DedicatedServer.redis();
  });

  afterAll(async () => {
    await server.stop();
  });

  it("closes every probe's connections, even when one of them fails to close", async () => {
    const admin = new Redis(server.url);
    const probeConnections = async () => {
      const clients = (await admin.call('CLIENT', 'LIST')) as string;
      return clients.split('\n').filter((line) => line.includes('cmd=set')).length;
    };
    const failing: Probe = {
      component: 'failing',
      critical: false,
      run: () => Promise.resolve(),
      close: () => Promise.reject(new Error('already gone')),
    };
    const monitor = new HealthMonitor(
      [failing, new CacheProbe(server.url, 1000), new CacheProbe(server.url, 1000)],
      loadPlatformConfig({ HEALTH_PROBE_TIMEOUT_MS: '1000' }),
    );
    try {
      await monitor.onApplicationBootstrap();
      expect((await monitor.latest()).checks.map((check) => check.status)).toEqual(['up', 'up', 'up']);
      expect(await probeConnections()).toBe(2);

      await monitor.onModuleDestroy();
      await waitFor('the probes to disconnect', async () => ((await probeConnections()) === 0 ? true : undefined));
    } finally {
      await admin.quit();
    }
  });
});

describe('MessageBusProbe against a NATS server of its own', () => {
  let server: ChildProcess | undefined;
  let probe: MessageBusProbe | undefined;

  afterEach(async () => {
    await probe?.close();
    const running = server;
    server = undefined;
    if (running && running.exitCode === null) {
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    }
  });

  it('reports the message bus up while its JetStream answers', async () => {
    probe = new MessageBusProbe(process.env.NATS_URL ?? 'nats://127.0.0.1:4222');
    await expect(probe.run(1000)).resolves.toBeUndefined();
  });

  it('reports the message bus down while it answers but its JetStream does not (no event can be published or consumed)', async () => {
    const port = await freePort();
    // NATS without JetStream: a round trip to the server works, every stream operation fails.
    server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    await waitFor('nats-server answering', () =>
      connect({ servers: `nats://127.0.0.1:${port}` })
        .then((connection) => connection.close())
        .then(() => true),
    );
    probe = new MessageBusProbe(`nats://127.0.0.1:${port}`);
    await expect(probe.run(1000)).rejects.toThrow();
  });
});
