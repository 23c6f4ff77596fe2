import { randomInt } from 'node:crypto';
import net from 'node:net';

import Fastify, { FastifyInstance } from 'fastify';
import Redis from 'ioredis';

import { clientError } from '../http/framework-errors';
import { ApiUsageCounter, NO_QUOTA } from './api-usage';
import { RateLimitHook } from './rate-limit.hook';
import { RateLimiter } from './rate-limiter';
import { TierCache } from './tier-cache';
import { RedisTokenBuckets } from './token-buckets';

/** Node's request timeout here: a body still missing this long after its request began is answered 408. */
const REQUEST_TIMEOUT_MS = 300;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
}

/** Sends `bytes` as they are from `from` and reads the answer until the server closes the connection. */
function exchange(port: number, from: string, bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head] = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]);
      if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(head)}`));
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status, headers });
    });
    socket.write(bytes);
  });
}

/**
 * Node's HTTP parser refuses some requests after their headers arrived, so after the rate-limit hook
 * took their token: a body that does not arrive in time (408), a chunked body that is not HTTP (400).
 * On a real server with the real hook and Redis buckets, such a refusal is the request's answer and
 * takes no second token.
 */
describe('a request refused after its headers (real server, real Redis)', () => {
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  // 10 tokens, refilled at one a minute: nothing comes back during a test.
  const tiers = {
    limitsOf: () =>
      Promise.resolve({
        tiers: [{ group: 'default', ratePerMinute: 1, burst: 600, scope: 'per-ip' }],
        apiRequestsPerDay: NO_QUOTA,
      }),
  } as unknown as TierCache;
  const usage = { usageOf: () => undefined, count: () => undefined } as unknown as ApiUsageCounter;
  const hook = new RateLimitHook(tiers, new RateLimiter(new RedisTokenBuckets(redis)), usage);
  let server: FastifyInstance;
  let port: number;

  beforeAll(async () => {
    server = Fastify({
      // Node takes its request timeout from the server's options only (Fastify's own default turns it off).
      requestTimeout: REQUEST_TIMEOUT_MS,
      http: { requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 50 },
      clientErrorHandler: clientError(() => (address, inFlight) => hook.limitPeer(address, inFlight)),
    });
    server.addHook('onRequest', (request, reply) => hook.handle(request, reply));
    server.get('/things', () => ({ ok: true }));
    server.post('/things', () => ({ ok: true }));
    await server.listen({ port: 0, host: '127.0.0.1' });
    port = (server.server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await server?.close();
    await redis.quit();
  });

  /** A loopback address of the test's own (127.0.0.0/8 is all local): a `default` bucket of its own. */
  const loopbackAddress = () => `127.${randomInt(1, 255)}.${randomInt(256)}.${randomInt(1, 255)}`;
  const get = `GET /things HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n`;
  const remaining = (answer: RawAnswer) => Number(answer.headers['x-ratelimit-remaining']);

  it('answers a body that does not arrive in time 408 with its own decision, one token taken', async () => {
    const from = loopbackAddress();
    const before = await exchange(port, from, get);
    expect(before.status).toBe(200);
    const slow = await exchange(
      port,
      from,
      'POST /things HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":',
    );
    const after = await exchange(port, from, get);

    expect(slow.status).toBe(408);
    expect(remaining(slow)).toBe(remaining(before) - 1);
    expect(slow.headers['x-ratelimit-limit']).toBe(before.headers['x-ratelimit-limit']);
    expect(remaining(after)).toBe(remaining(before) - 2);
  });

  it('answers a chunked body that is not HTTP 400 with its own decision, one token taken', async () => {
    const from = loopbackAddress();
    const before = await exchange(port, from, get);
    // Headers and broken chunk in one write: the parser refuses the body before the hook has decided.
    const broken = await exchange(
      port,
      from,
      'POST /things HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    );
    const after = await exchange(port, from, get);

    expect(broken.status).toBe(400);
    expect(remaining(broken)).toBe(remaining(before) - 1);
    expect(remaining(after)).toBe(remaining(before) - 2);
  });

  it('still counts a refusal of bytes no request was made of, once', async () => {
    const from = loopbackAddress();
    const before = await exchange(port, from, get);
    const refused = await exchange(port, from, 'GET /things HTTP/1.1\r\nHost: gateway\r\nX-Id: a\u0001b\r\n\r\n');
    const after = await exchange(port, from, get);

    expect(refused.status).toBe(400);
    expect(remaining(refused)).toBe(remaining(before) - 1);
    expect(remaining(after)).toBe(remaining(before) - 2);
  });
});
