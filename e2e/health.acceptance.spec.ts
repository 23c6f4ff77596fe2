import { HealthReport, packageVersion } from '@acct/testing';

import { call, expectProblem, freshIp, stack } from './support/client';

/** Interface §2.3 / §4.3, contract §5: GET /v2/system/health, unauthenticated. */
describe('GET /v2/system/health', () => {
  it('answers 200 with the report: exactly its fields, healthy, every dependency up with a decimal latency', async () => {
    const answer = await call<HealthReport>('/v2/system/health');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const report = answer.body;
    expect(Object.keys(report).sort()).toEqual(['checks', 'region', 'status', 'uptime_seconds', 'version']);
    expect(report.status).toBe('healthy');
    expect(report.version).toMatch(/^\d+(\.\d+)+$/);
    expect(report.version).toBe(packageVersion);
    expect(report.region).toBe(stack.region);
    expect(Number.isInteger(report.uptime_seconds)).toBe(true);
    expect(report.uptime_seconds).toBeGreaterThanOrEqual(0);
    const components = report.checks.map((check) => check.component);
    expect(components).toEqual(expect.arrayContaining(['database', 'cache', 'object_storage', 'message_bus']));
    expect(components).toEqual(expect.arrayContaining(['identity', 'auth', 'platform']));
    expect(new Set(components).size).toBe(components.length);
    for (const check of report.checks) {
      expect(Object.keys(check).sort()).toEqual(['component', 'latency_ms', 'status']);
      expect(check).toEqual({ component: expect.any(String), status: 'up', latency_ms: expect.any(Number) });
      expect(Number.isFinite(check.latency_ms) && check.latency_ms >= 0).toBe(true);
    }
  });

  it('does not check a token: a garbage bearer still gets the report', async () => {
    const answer = await call<HealthReport>('/v2/system/health', { headers: { authorization: 'Bearer garbage' } });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('healthy');
  });

  it('carries X-Request-Id (the client’s own when sane) and the rate-limit headers of its group', async () => {
    const own = await call('/v2/system/health', { headers: { 'x-request-id': 'acceptance-health-1' } });
    expect(own.headers.get('x-request-id')).toBe('acceptance-health-1');
    const generated = await call('/v2/system/health');
    expect(generated.headers.get('x-request-id')).toMatch(/\S{8,}/);
    // system.health: per-ip, 600/min burst 10 → capacity 10/s × 10 = 100; the first request leaves 99.
    expect(generated.headers.get('x-ratelimit-limit')).toBe('100');
    expect(generated.headers.get('x-ratelimit-remaining')).toBe('99');
    const reset = Number(generated.headers.get('x-ratelimit-reset'));
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 1);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 11);
  });

  it('answers another method with 405 method_not_allowed and an Allow naming GET and HEAD, which both answer', async () => {
    for (const method of ['POST', 'DELETE', 'PUT']) {
      const answer = await call('/v2/system/health', { method });
      expectProblem(answer, 405, 'method_not_allowed');
      expect(answer.headers.get('allow')).toBe('GET, HEAD');
    }
    // HEAD is GET without the content (RFC 9110 §9.3.2): what Allow names is served.
    const head = await call('/v2/system/health', { method: 'HEAD' });
    expect({ status: head.status, body: head.text }).toEqual({ status: 200, body: '' });
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('is rate limited per IP too: past the bucket 429 rate_limited with Retry-After; another IP is unaffected', async () => {
    const ip = freshIp();
    const answers = await Promise.all(Array.from({ length: 160 }, () => call('/v2/system/health', { ip })));
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(100);
    for (const answer of limited) {
      expectProblem(answer, 429, 'rate_limited');
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    expect((await call('/v2/system/health', { ip: freshIp() })).status).toBe(200);
  });
});
