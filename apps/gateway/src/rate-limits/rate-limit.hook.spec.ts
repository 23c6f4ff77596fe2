import { STANDARD_TIERS } from '@acct/limits';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiUsageCounter, NO_QUOTA } from './api-usage';
import { RateLimitHook } from './rate-limit.hook';
import { RateLimiter } from './rate-limiter';
import { TierCache } from './tier-cache';
import { InProcessTokenBuckets } from './token-buckets';

/** What the hook wrote: status, headers and the problem document. */
interface Sent {
  status?: number;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
}

function replyRecording(sent: Sent): FastifyReply {
  const reply = {
    raw: {},
    header(name: string, value: string) {
      sent.headers[name] = value;
      return reply;
    },
    status(status: number) {
      sent.status = status;
      return reply;
    },
    send(body: string) {
      sent.body = JSON.parse(body) as Record<string, unknown>;
      return reply;
    },
  };
  return reply as unknown as FastifyReply;
}

const request = (group: string) =>
  ({
    id: 'req-1',
    ip: '203.0.113.9',
    ips: ['203.0.113.9'],
    socket: { remoteAddress: '203.0.113.9' },
    headers: {},
    routeOptions: { config: { rateLimitGroup: group } },
  }) as unknown as FastifyRequest;

describe('RateLimitHook', () => {
  const tiers = {
    limitsOf: () => Promise.resolve({ tiers: STANDARD_TIERS, apiRequestsPerDay: NO_QUOTA }),
  } as unknown as TierCache;
  const usage = { usageOf: () => undefined, count: () => undefined } as unknown as ApiUsageCounter;

  /** Sends requests of `group` from one address until the bucket is empty; the first refusal. */
  async function firstRefusal(group: string): Promise<Sent> {
    const hook = new RateLimitHook(tiers, new RateLimiter(new InProcessTokenBuckets()), usage);
    for (let attempt = 0; attempt < 1000; attempt += 1) {
      const sent: Sent = { headers: {} };
      await hook.handle(request(group), replyRecording(sent));
      if (sent.status !== undefined) return sent;
    }
    throw new Error(`the ${group} bucket never ran empty`);
  }

  it('answers 429 rate_limited with Retry-After when the bucket is empty', async () => {
    const sent = await firstRefusal('system.read');
    expect(sent.status).toBe(429);
    expect(Number(sent.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(sent.body).toMatchObject({ status: 429, code: 'rate_limited' });
  });

  it("gives the token endpoint's 429 rate_limited the RFC 6749 error members too (contract §4)", async () => {
    const sent = await firstRefusal('auth');
    expect(sent.status).toBe(429);
    expect(sent.body).toMatchObject({ code: 'rate_limited', error: 'rate_limited' });
    expect(typeof sent.body?.error_description).toBe('string');
  });
});

describe('RateLimitHook at the end of a UTC day', () => {
  const MIDNIGHT = Date.UTC(2026, 10, 29);
  const caller = { orgId: 'org-1', tokenId: 'jti-1' };

  afterEach(() => jest.restoreAllMocks());

  it("tells a request refused for the day's API requests a moment before midnight to retry in a second, not a day", async () => {
    // The request names its day's counter at 23:59:59.999; Redis decides on it 2 ms later, after midnight.
    jest.spyOn(Date, 'now').mockReturnValue(MIDNIGHT - 1);
    const tiers = {
      limitsOf: () => Promise.resolve({ tiers: STANDARD_TIERS, apiRequestsPerDay: 100 }),
    } as unknown as TierCache;
    const usage = {
      usageOf: (_orgId: string, limit: number) => ({ key: 'usage:api:{org-1}:2026-11-28', retentionSeconds: 1, limit }),
      count: () => undefined,
    } as unknown as ApiUsageCounter;
    const limiter = {
      isShared: () => true,
      take: () =>
        Promise.resolve({
          allowed: false,
          overQuota: true,
          counted: false,
          remaining: 59,
          msUntilFull: 0,
          msUntilToken: 0,
          now: MIDNIGHT + 2,
          capacity: 300,
          windowMs: 60_000,
          source: 'redis',
        }),
    } as unknown as RateLimiter;
    const hook = new RateLimitHook(tiers, limiter, usage);
    const sent: Sent = { headers: {} };
    await hook.handle(Object.assign(request('users.read'), { caller }), replyRecording(sent));
    expect(sent.status).toBe(429);
    expect(sent.body).toMatchObject({ code: 'quota_exceeded' });
    expect(sent.headers['Retry-After']).toBe('1');
  });
});
