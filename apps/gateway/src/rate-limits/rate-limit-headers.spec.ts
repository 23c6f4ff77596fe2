import type { FastifyReply } from 'fastify';

import { setRateLimitHeaders } from './rate-limit.hook';
import { RateLimitDecision } from './rate-limiter';

function headersFor(decision: Partial<RateLimitDecision>): Record<string, string> {
  const headers: Record<string, string> = {};
  const reply = {
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
  };
  setRateLimitHeaders(reply as unknown as FastifyReply, 'auth', {
    allowed: true,
    remaining: 2,
    msUntilFull: 6_000,
    msUntilToken: 0,
    now: 1_700_000_000_000,
    capacity: 3.33,
    windowMs: 20_000,
    source: 'redis',
    counted: false,
    overQuota: false,
    ...decision,
  });
  return headers;
}

describe('rate-limit headers (contract §2 and draft-ietf-httpapi-ratelimit-headers)', () => {
  it('states the capacity rounded down, the tokens left and when the bucket is full again', () => {
    expect(headersFor({})).toEqual({
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '2',
      'X-RateLimit-Reset': String(1_700_000_006),
      'RateLimit-Policy': '"auth";q=3;w=20',
      RateLimit: '"auth";r=2;t=0',
    });
  });

  it('rounds the reset and the wait for the next token up to whole seconds', () => {
    const headers = headersFor({ remaining: 0, msUntilFull: 18_001, msUntilToken: 5_001, now: 1_700_000_000_500 });
    expect(headers['X-RateLimit-Reset']).toBe(String(1_700_000_019));
    expect(headers.RateLimit).toBe('"auth";r=0;t=6');
  });

  it('never announces a window under one second', () => {
    expect(headersFor({ windowMs: 10 })['RateLimit-Policy']).toBe('"auth";q=3;w=1');
  });
});
