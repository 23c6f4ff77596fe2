import { randomUUID } from 'node:crypto';

import { QuotaReport, request, TestStack, waitFor } from '@acct/testing';
import { connect, NatsConnection } from 'nats';

interface Bootstrap {
  org_id: string;
  client_id: string;
  client_secret: string;
}

/** Issue 4: quotas with real usage (gateway counts, identity events, usage events) and the Users limit. */
describe('quotas', () => {
  let stack: TestStack;
  let nats: NatsConnection;
  let org: Bootstrap;
  let token: string;

  const quota = async (query = '') =>
    request<QuotaReport & { code?: string }>(stack.url(`/v2/system/quota${query}`), { token });
  const entry = (report: QuotaReport, name: string) => report.quotas.find((item) => item.name === name)!;
  const publishUsage = async (data: Record<string, unknown>, id: string = randomUUID(), occurredAt = new Date()) => {
    const event = { id, type: 'platform.usage.reported', version: 1, occurred_at: occurredAt.toISOString(), data };
    const js = nats.jetstream();
    await js.publish('platform.usage.reported', JSON.stringify(event), { msgID: id });
  };

  beforeAll(async () => {
    stack = await TestStack.start({ apps: ['identity', 'auth', 'platform', 'gateway'] });
    nats = await connect({ servers: stack.env.NATS_URL });
    org = stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      `quota-${Date.now()}`,
      '--email',
      `admin-${Date.now()}@quota.test`,
      '--password',
      'admin-pass-1',
    );
    const issued = await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret },
    });
    token = issued.body.access_token;
    // The platform creates the usage stream when it starts consuming; wait until it exists.
    const jsm = await nats.jetstreamManager();
    await waitFor('usage stream', async () =>
      (await jsm.streams.info('PLATFORM_USAGE').catch(() => undefined)) ? true : undefined,
    );
  });

  afterAll(async () => {
    await nats?.drain();
    await stack?.close();
  });

  it('reports every quota of the org with the interface fields', async () => {
    const { status, body } = await quota();
    expect(status).toBe(200);
    expect(body.org_id).toBe(org.org_id);
    expect(body.quotas.map((item) => [item.dimension, item.name, item.unit])).toEqual([
      ['compute', 'vCPU cores', 'core'],
      ['compute', 'Instances', 'count'],
      ['storage', 'Object storage', 'GB'],
      ['network', 'Egress traffic', 'GB'],
      ['api', 'API requests', 'req/day'],
      ['api', 'Users', 'count'],
    ]);
    for (const item of body.quotas) {
      expect(Object.keys(item).sort()).toEqual(['dimension', 'limit', 'name', 'unit', 'used']);
      expect(typeof item.used).toBe('number');
      expect(typeof item.limit).toBe('number');
    }
  });

  it('filters by dimension and refuses an unknown one with 400 validation_failed', async () => {
    const { body } = await quota('?dimension=api');
    expect(body.quotas.map((item) => item.name)).toEqual(['API requests', 'Users']);
    const bad = await quota('?dimension=memory');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    // An empty value names no dimension either: refused, not read as "every dimension".
    for (const query of ['?dimension=', '?dimension']) {
      const empty = await quota(query);
      expect([query, empty.status, empty.body.code]).toEqual([query, 400, 'validation_failed']);
    }
  });

  it("counts the org's API requests of the day", async () => {
    const before = entry((await quota()).body, 'API requests').used;
    await quota();
    await quota();
    const after = entry((await quota()).body, 'API requests').used;
    expect(after - before).toBeGreaterThanOrEqual(3);
  });

  it("refuses an org's requests over its daily API requests quota with 429 quota_exceeded until UTC midnight, and still shows it the quota", async () => {
    const small = stack.cli<Bootstrap>(
      ...['bootstrap', '--org', `quota-small-${Date.now()}`, '--email', `admin-${Date.now()}@small.test`],
      ...['--password', 'admin-pass-1'],
    );
    // Before the org's first request, so the gateway learns its limits with the quota already set.
    stack.cli('set-quota', '--org-id', small.org_id, '--dimension', 'api', '--name', 'API requests', '--limit', '3');
    const issued = await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'client_credentials', client_id: small.client_id, client_secret: small.client_secret },
    });
    const smallToken = issued.body.access_token;
    const list = () => request<{ code?: string }>(stack.url('/v2/users?limit=1'), { token: smallToken });
    for (let index = 0; index < 3; index += 1) expect((await list()).status).toBe(200);
    const refused = await list();
    const startOfTomorrow = Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000;
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('quota_exceeded');
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Math.abs(Date.now() + retryAfter * 1000 - startOfTomorrow)).toBeLessThan(5_000);
    expect(refused.headers.get('x-ratelimit-limit')).not.toBeNull();
    // Its own limits and usage stay readable (counted, never refused): 3 served and this read, not the
    // refused one.
    const report = await request<QuotaReport>(stack.url('/v2/system/quota?dimension=api'), { token: smallToken });
    expect(report.status).toBe(200);
    expect(entry(report.body, 'API requests')).toMatchObject({ limit: 3, used: 4 });
    // Another org is not affected.
    expect((await quota()).status).toBe(200);
    expect((await request(stack.url('/v2/users?limit=1'), { token })).status).toBe(200);
  });

  it('applies usage events once, by event id, latest report winning', async () => {
    const id = randomUUID();
    await publishUsage({ org_id: org.org_id, dimension: 'compute', name: 'vCPU cores', used: 12.5 }, id);
    await waitFor('usage applied', async () =>
      entry((await quota()).body, 'vCPU cores').used === 12.5 ? true : undefined,
    );
    // The same event again (another id would be a new report) changes nothing; an older report loses.
    await publishUsage({ org_id: org.org_id, dimension: 'compute', name: 'vCPU cores', used: 99 }, id);
    await publishUsage(
      { org_id: org.org_id, dimension: 'compute', name: 'vCPU cores', used: 1 },
      randomUUID(),
      new Date(Date.now() - 3_600_000),
    );
    await publishUsage({ org_id: org.org_id, dimension: 'storage', name: 'Object storage', used: 3 });
    await waitFor('storage applied', async () =>
      entry((await quota()).body, 'Object storage').used === 3 ? true : undefined,
    );
    expect(entry((await quota()).body, 'vCPU cores').used).toBe(12.5);
  });

  it('counts users from identity events and refuses one over the Users limit with 403 quota_exceeded', async () => {
    const createUser = (label: string) =>
      request<{ id?: string; code?: string }>(stack.url('/v2/users'), {
        token,
        body: { email: `${label}-${Date.now()}@quota.test`, display_name: label, send_activation: false },
      });
    // The bootstrapped admin is the org's first user.
    await waitFor('admin counted', async () => (entry((await quota()).body, 'Users').used === 1 ? true : undefined));
    expect((await createUser('one')).status).toBe(201);
    expect((await createUser('two')).status).toBe(201);
    await waitFor('users counted', async () => (entry((await quota()).body, 'Users').used === 3 ? true : undefined));
    stack.cli('set-quota', '--org-id', org.org_id, '--dimension', 'api', '--name', 'Users', '--limit', '3');
    expect(entry((await quota()).body, 'Users').limit).toBe(3);
    const refused = await createUser('three');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('quota_exceeded');
    // Concurrent creations cannot overshoot a limit either: at 4, exactly one of five wins.
    stack.cli('set-quota', '--org-id', org.org_id, '--dimension', 'api', '--name', 'Users', '--limit', '4');
    const racers = await Promise.all(['r1', 'r2', 'r3', 'r4', 'r5'].map((label) => createUser(label)));
    expect(racers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(racers.filter((answer) => answer.body.code === 'quota_exceeded')).toHaveLength(4);
    // identity.user.deleted counts a user out again.
    const winner = racers.find((answer) => answer.status === 201)!;
    expect((await request(stack.url(`/v2/users/${winner.body.id}`), { token, method: 'DELETE' })).status).toBe(204);
    await waitFor('deletion counted', async () => (entry((await quota()).body, 'Users').used === 3 ? true : undefined));
  });

  it('ignores malformed usage events', async () => {
    await publishUsage({ org_id: org.org_id, dimension: 'network', name: 'Egress traffic', used: -5 });
    await publishUsage({ org_id: org.org_id, dimension: 'network', name: 'Egress traffic', used: 7 });
    await waitFor('egress applied', async () =>
      entry((await quota()).body, 'Egress traffic').used === 7 ? true : undefined,
    );
  });

  it('rejects once, and never redelivers, a usage event the database cannot store (a NUL in org_id)', async () => {
    const jsm = await nats.jetstreamManager();
    const consumer = () => jsm.consumers.info('PLATFORM_USAGE', 'platform-usage');
    await publishUsage({ org_id: 'poison\u0000org', dimension: 'network', name: 'Egress traffic', used: 1 });
    await publishUsage({ org_id: org.org_id, dimension: 'network', name: 'Egress traffic', used: 8 });
    await waitFor('egress applied', async () =>
      entry((await quota()).body, 'Egress traffic').used === 8 ? true : undefined,
    );
    // Retried every second it would still be pending, redelivered again and again.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const info = await consumer();
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
  });
});
