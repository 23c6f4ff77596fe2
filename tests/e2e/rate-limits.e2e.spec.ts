import {
  ApiClient,
  Bootstrap,
  bootstrapOrg,
  DedicatedServer,
  request,
  setRateLimit,
  TestStack,
  waitFor,
} from '@acct/testing';

/** Issue 4: token buckets in Redis, per org tiers, headers, 429s, scale-out and the Redis outage fallback. */
describe('rate limits', () => {
  let stack: TestStack;
  let redis: DedicatedServer;
  let org: Bootstrap;
  let ipCounter = 0;
  /** A fresh client address per test (the gateway trusts X-Forwarded-For from 127.0.0.1 here). */
  const freshIp = () => `203.0.113.${(ipCounter += 1)}`;

  const clientToken = async (ip = freshIp()) =>
    (await new ApiClient(stack.url('')).clientToken(org, { ip })).access_token;
  const rateLimits = (token: string, base = stack.url('')) =>
    fetch(`${base}/v2/system/rate-limits`, { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    redis = await DedicatedServer.redis();
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      redisUrl: redis.url,
      env: { TRUSTED_PROXIES: '127.0.0.1', RATE_LIMIT_TIERS_TTL_MS: '100' },
    });
    org = bootstrapOrg(stack, 'limited', 'admin@limited.test', 'admin-pass-1');
    setRateLimit(stack, org.org_id, 'system.read', { ratePerMinute: 60, burst: 3 });
  });

  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
  });

  it('reports the org tiers, including its own override, with the notice', async () => {
    const response = await rateLimits(await clientToken());
    expect(response.status).toBe(200);
    const body = (await response.json()) as { tiers: Array<Record<string, unknown>>; notice: string };
    expect(body.notice).toMatch(/429/);
    expect(body.notice).toMatch(/Retry-After/);
    const byGroup = Object.fromEntries(body.tiers.map((tier) => [tier.group, tier]));
    expect(byGroup.auth).toEqual({ group: 'auth', limit: '10/min', burst: 20, scope: 'per-ip' });
    expect(byGroup['users.read']).toEqual({ group: 'users.read', limit: '300/min', burst: 60, scope: 'per-token' });
    expect(byGroup['compute.write']).toEqual({
      group: 'compute.write',
      limit: '60/min',
      burst: 10,
      scope: 'per-token',
    });
    expect(byGroup['metrics.query']).toEqual({ group: 'metrics.query', limit: '60/min', burst: 5, scope: 'per-token' });
    expect(byGroup['system.read']).toEqual({ group: 'system.read', limit: '60/min', burst: 3, scope: 'per-token' });
  });

  it('admits exactly the capacity from a full bucket, then 429 with Retry-After, then refills at the rate', async () => {
    const token = await clientToken();
    // system.read for this org: 60/min × burst 3 → capacity 3, one token a second.
    const answers = [];
    for (let index = 0; index < 4; index += 1) answers.push(await rateLimits(token));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    for (const answer of answers) expect(answer.headers.get('x-ratelimit-limit')).toBe('3');
    const limited = answers[3];
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await limited.json()) as { code: string }).code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('1');
    const reset = Number(limited.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 2);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 4);
    expect(limited.headers.get('ratelimit-policy')).toBe('"system.read";q=3;w=3');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await rateLimits(token)).status).toBe(200);
    expect((await rateLimits(token)).status).toBe(429);
  });

  it("states an override's whole capacity and refill window exactly, whatever floating point makes of rate / 60", async () => {
    const other = bootstrapOrg(stack, 'limited-exactly', 'admin@limited-exactly.test', 'admin-pass-1');
    // 11/60 × 300 = 55 requests (54.99999999999999 when divided first); 3/60 × 24 refills in 24 s.
    setRateLimit(stack, other.org_id, 'system.read', { ratePerMinute: 11, burst: 300 });
    setRateLimit(stack, other.org_id, 'users.read', { ratePerMinute: 3, burst: 24 });
    const token = (await new ApiClient(stack.url('')).clientToken(other, { ip: freshIp() })).access_token;
    const tiers = await rateLimits(token);
    expect(tiers.status).toBe(200);
    const body = (await tiers.json()) as { tiers: Array<Record<string, unknown>> };
    expect(body.tiers).toContainEqual({ group: 'system.read', limit: '11/min', burst: 300, scope: 'per-token' });
    expect(tiers.headers.get('x-ratelimit-limit')).toBe('55');
    expect(tiers.headers.get('ratelimit-policy')).toBe('"system.read";q=55;w=300');
    const read = await fetch(stack.url('/v2/users/me'), { headers: { authorization: `Bearer ${token}` } });
    expect(read.headers.get('ratelimit-policy')).toBe('"users.read";q=1;w=24');
  });

  it('keeps separate buckets per token, and counts per IP where the group says so', async () => {
    const ip = freshIp();
    const [first, second] = [await clientToken(ip), await clientToken(freshIp())];
    for (let index = 0; index < 3; index += 1) expect((await rateLimits(first)).status).toBe(200);
    expect((await rateLimits(first)).status).toBe(429);
    expect((await rateLimits(second)).status).toBe(200);
  });

  it('holds the token endpoint to the auth tier per IP: capacity floor(10/60 × 20) = 3', async () => {
    const ip = freshIp();
    const attempt = () =>
      request(stack.url('/v2/auth/token'), {
        body: { grant_type: 'password', username: 'nobody@limited.test', password: 'wrong-pass-1' },
        headers: { 'x-forwarded-for': ip },
      });
    const statuses = [];
    for (let index = 0; index < 4; index += 1) statuses.push((await attempt()).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
    const other = await request(stack.url('/v2/auth/token'), {
      body: { grant_type: 'password', username: 'nobody@limited.test', password: 'wrong-pass-1' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(other.status).toBe(400);
    expect(other.headers.get('x-ratelimit-limit')).toBe('3');
  });

  it('puts the headers on every response: 2xx, 4xx and health', async () => {
    for (const path of ['/v2/system/health', '/v2/nowhere', '/v2/users/me']) {
      const response = await fetch(stack.url(path), { headers: { 'x-forwarded-for': freshIp() } });
      for (const header of [
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'ratelimit',
        'ratelimit-policy',
      ]) {
        expect(response.headers.get(header)).not.toBeNull();
      }
    }
  });

  it('shares one budget between two gateway instances under concurrent load', async () => {
    const second = await stack.startExtraGateway();
    const token = await clientToken();
    await new Promise((resolve) => setTimeout(resolve, 3100)); // let this token's bucket be full
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) => rateLimits(token, index % 2 === 0 ? stack.url('') : second)),
    );
    expect(answers.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(4);
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(3);
    expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThanOrEqual(16);
  });

  it('keeps serving with an in-process limiter while Redis is down, and goes back to Redis after', async () => {
    const token = await clientToken();
    await redis.stop();
    const during = await rateLimits(token);
    expect(during.status).toBe(200);
    expect(during.headers.get('x-ratelimit-limit')).toBe('3');
    const health = await waitFor('degraded', async () => {
      const response = await fetch(stack.url('/v2/system/health'));
      const body = (await response.json()) as { status: string };
      return body.status === 'degraded' ? response : undefined;
    });
    expect(health.status).toBe(200);
    // The fallback still limits: the local bucket empties like the shared one.
    const burst = [];
    for (let index = 0; index < 4; index += 1) burst.push((await rateLimits(token)).status);
    expect(burst).toContain(429);
    await redis.start();
    const fresh = await clientToken();
    await waitFor('shared buckets again', async () => {
      const response = await rateLimits(fresh);
      return response.status === 200 ? true : undefined;
    });
  });
});
