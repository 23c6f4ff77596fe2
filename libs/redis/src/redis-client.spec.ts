import { once } from 'node:events';

import { DedicatedServer, freePort, TcpProxy } from '@acct/testing';
import Redis from 'ioredis';

import { failFastRedis } from './redis-client';

describe('failFastRedis', () => {
  let server: DedicatedServer;
  const opened: Redis[] = [];
  const ready = async (url: string, options: Parameters<typeof failFastRedis>[1]) => {
    const redis = failFastRedis(url, options);
    opened.push(redis);
    if (redis.status !== 'ready') await once(redis, 'ready');
    return redis;
  };

  beforeAll(async () => {
    server = await DedicatedServer.redis();
  });

  afterEach(() => {
    for (const redis of opened.splice(0)) redis.disconnect();
  });

  afterAll(async () => {
    await server.stop();
  });

  it('prefixes its keys', async () => {
    const redis = await ready(server.url, { keyPrefix: 'tenant:', commandTimeoutMs: 500 });
    await redis.set('key', 'value');
    const plain = new Redis(server.url);
    try {
      expect(await plain.get('tenant:key')).toBe('value');
    } finally {
      plain.disconnect();
    }
  });

  it('fails a command at once while Redis is away, instead of queueing it, and does not crash on its errors', async () => {
    const redis = failFastRedis(`redis://127.0.0.1:${await freePort()}`, { commandTimeoutMs: 5000, retryStepMs: 100 });
    opened.push(redis);
    const started = Date.now();
    await expect(redis.get('key')).rejects.toThrow(/enableOfflineQueue/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('fails a command after its timeout on a connection a failover left silent, and replaces that connection after 2 s', async () => {
    const proxy = await TcpProxy.start(Number(new URL(server.url).port));
    try {
      const redis = await ready(`redis://127.0.0.1:${proxy.port}`, { commandTimeoutMs: 200, retryStepMs: 100 });
      proxy.strand();
      const started = Date.now();
      await expect(redis.get('key')).rejects.toThrow(/timed out/i);
      expect(Date.now() - started).toBeLessThan(1000);
      // The connection stays open and silent: only the socket's timeout (max(2 s, 200 ms)) closes it.
      // (events.once would reject on the 'error' event that comes first: "Socket timeout".)
      await new Promise((resolve) => redis.once('close', resolve));
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      await new Promise((resolve) => redis.once('ready', resolve));
      expect(await redis.set('key', 'again')).toBe('OK');
    } finally {
      await proxy.cut();
    }
  }, 10_000);
});
