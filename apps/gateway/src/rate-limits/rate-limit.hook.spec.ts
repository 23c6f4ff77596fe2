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
