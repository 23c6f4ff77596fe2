import { randomUUID } from 'node:crypto';

import { Quota, waitFor } from '@acct/testing';
import { connect } from 'nats';

import {
  api,
  call,
  cli,
  expectProblem,
  issue,
  newOrg,
  raiseLimit,
  setRateLimit,
  stack,
  uniqueEmail,
} from './support/client';

interface Tier {
  group: string;
  limit: string;
  burst: number;
  scope: string;
}

const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/** Interface §2.4 / §2.5 / §4.4 / §4.5 / §8, contract §2 and §5: tiers, their enforcement, quotas. */
describe('rate limits and quotas', () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  const clientToken = async () => (await api.clientToken(org)).access_token;

  beforeAll(async () => {
    org = await newOrg('limits');
    // Before any authenticated request of this org, so no gateway holds its tiers from before.
    setRateLimit(org.org_id, 'system.read', { ratePerMinute: 60, burst: 3 });
  });

  describe('GET /v2/system/rate-limits', () => {
    it('answers the org’s tiers, exactly their fields, the contract defaults and its own override, and the notice', async () => {
      const answer = await call<{ tiers: Tier[]; notice: string }>('/v2/system/rate-limits', {
        token: org.admin.access_token,
      });
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.body).sort()).toEqual(['notice', 'tiers']);
      expect(answer.body.notice).toMatch(/429/);
      expect(answer.body.notice).toMatch(/Retry-After/);
      for (const tier of answer.body.tiers) {
        expect(Object.keys(tier).sort()).toEqual(['burst', 'group', 'limit', 'scope']);
        expect(tier.limit).toMatch(/^\d+\/min$/);
        expect(Number.isInteger(tier.burst)).toBe(true);
        expect(['per-ip', 'per-token']).toContain(tier.scope);
      }
      expect(answer.body.tiers).toEqual(
        expect.arrayContaining([
          { group: 'auth', limit: '10/min', burst: 20, scope: 'per-ip' },
          { group: 'users.read', limit: '300/min', burst: 60, scope: 'per-token' },
          { group: 'compute.write', limit: '60/min', burst: 10, scope: 'per-token' },
          { group: 'metrics.query', limit: '60/min', burst: 5, scope: 'per-token' },
          { group: 'users.write', limit: '60/min', burst: 10, scope: 'per-token' },
          { group: 'system.read', limit: '60/min', burst: 3, scope: 'per-token' },
          { group: 'system.health', limit: '600/min', burst: 10, scope: 'per-ip' },
        ]),
      );
    });

    it('enforces exactly what it reports: capacity 60/60 × 3 = 3 per token, then 429 with Retry-After; another token has its own bucket', async () => {
      const token = await clientToken();
      const answers = [];
      for (let index = 0; index < 4; index += 1) answers.push(await call('/v2/system/rate-limits', { token }));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
      expect(answers.map((answer) => answer.headers.get('x-ratelimit-limit'))).toEqual(['3', '3', '3', '3']);
      expect(answers.map((answer) => answer.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
      const limited = answers[3];
      expectProblem(limited, 429, 'rate_limited');
      expect(limited.headers.get('retry-after')).toBe('1');
      const reset = Number(limited.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 1);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 4);
      // The same group covers the quota endpoint: this token's bucket is empty there too.
      expectProblem(await call('/v2/system/quota', { token }), 429, 'rate_limited');
      expect((await call('/v2/system/rate-limits', { token: await clientToken() })).status).toBe(200);
    });

    it('puts X-RateLimit-Limit/Remaining/Reset on every response: 2xx, 401, 404, 405, and health', async () => {
      const token = await clientToken();
      const answers = [
        await call('/v2/system/rate-limits', { token }),
        await call('/v2/system/rate-limits'),
        await call('/v2/nowhere'),
        await call('/v2/system/rate-limits', { method: 'POST', token }),
        await call('/v2/system/health'),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([200, 401, 404, 405, 200]);
      for (const answer of answers) {
        for (const header of RATE_LIMIT_HEADERS)
          expect({ header, value: answer.headers.get(header) }).toEqual({
            header,
            value: expect.stringMatching(/^\d+$/),
          });
      }
    });

    it('needs system:read: 401 without a token, 403 insufficient_scope without the scope', async () => {
      const none = await call('/v2/system/rate-limits');
      expectProblem(none, 401, 'unauthenticated');
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const narrow = await issue({
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
        scope: 'users:read',
      });
      const refused = await call('/v2/system/rate-limits', { token: narrow.access_token });
      expectProblem(refused, 403, 'insufficient_scope');
      expect(refused.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="system:read"/);
    });
  });

  describe('GET /v2/system/quota', () => {
    let quotaOrg: Awaited<ReturnType<typeof newOrg>>;
    const quota = (query = '', token = quotaOrg.admin.access_token) =>
      call<{ org_id: string; quotas: Quota[] }>(`/v2/system/quota${query}`, { token });
    const entry = async (dimension: string, name: string) =>
      (await quota(`?dimension=${dimension}`)).body.quotas.find((one) => one.name === name);

    beforeAll(async () => {
      quotaOrg = await newOrg('quota');
      for (const group of ['system.read', 'users.write']) raiseLimit(quotaOrg.org_id, group);
    });

    it('answers org_id and every quota with exactly its fields: the standard plan’s limits in their units', async () => {
      const answer = await quota();
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.body).sort()).toEqual(['org_id', 'quotas']);
      expect(answer.body.org_id).toBe(quotaOrg.org_id);
      for (const one of answer.body.quotas) {
        expect(Object.keys(one).sort()).toEqual(['dimension', 'limit', 'name', 'unit', 'used']);
        expect(one.used).toBeGreaterThanOrEqual(0);
      }
      const limits = answer.body.quotas.map(({ dimension, name, limit, unit }) => ({ dimension, name, limit, unit }));
      expect(limits).toEqual(
        expect.arrayContaining([
          { dimension: 'compute', name: 'vCPU cores', limit: 64, unit: 'core' },
          { dimension: 'compute', name: 'Instances', limit: 20, unit: 'count' },
          { dimension: 'storage', name: 'Object storage', limit: 1024, unit: 'GB' },
          { dimension: 'network', name: 'Egress traffic', limit: 500, unit: 'GB' },
          { dimension: 'api', name: 'API requests', limit: 100000, unit: 'req/day' },
          { dimension: 'api', name: 'Users', limit: 100, unit: 'count' },
        ]),
      );
      expect(new Set(answer.body.quotas.map((one) => one.dimension))).toEqual(
        new Set(['compute', 'storage', 'network', 'api']),
      );
    });

    it('restricts to one dimension, and refuses an unknown one with 400 validation_failed', async () => {
      for (const dimension of ['compute', 'storage', 'network', 'api']) {
        const answer = await quota(`?dimension=${dimension}`);
        expect(answer.status).toBe(200);
        expect(answer.body.quotas.length).toBeGreaterThan(0);
        expect(answer.body.quotas.every((one) => one.dimension === dimension)).toBe(true);
      }
      const problem = expectProblem(await quota('?dimension=gpu'), 400, 'validation_failed');
      expect(problem.errors?.map((error) => error.field)).toContain('dimension');
    });

    it('counts the org’s API requests of the day', async () => {
      const before = (await entry('api', 'API requests'))!.used;
      for (let index = 0; index < 3; index += 1) await call('/v2/users/me', { token: quotaOrg.admin.access_token });
      const after = await waitFor('the requests counted', async () => {
        const used = (await entry('api', 'API requests'))!.used;
        return used >= before + 3 ? used : undefined;
      });
      expect(after).toBeGreaterThanOrEqual(before + 3);
    });

    it('shows compute, storage and network usage reported on NATS (platform.usage.reported)', async () => {
      const connection = await connect({ servers: stack.natsUrl });
      try {
        const js = connection.jetstream();
        const report = (dimension: string, name: string, used: number) => {
          const event = {
            id: randomUUID(),
            type: 'platform.usage.reported',
            version: 1,
            occurred_at: new Date().toISOString(),
            data: { org_id: quotaOrg.org_id, dimension, name, used },
          };
          return js.publish('platform.usage.reported', JSON.stringify(event), { msgID: event.id });
        };
        await report('compute', 'vCPU cores', 12.5);
        await report('storage', 'Object storage', 300);
        await report('network', 'Egress traffic', 42);
        await waitFor('the usage applied', async () => {
          const quotas = (await quota()).body.quotas;
          const used = (name: string) => quotas.find((one) => one.name === name)?.used;
          return used('vCPU cores') === 12.5 && used('Object storage') === 300 && used('Egress traffic') === 42
            ? true
            : undefined;
        });
      } finally {
        await connection.drain();
      }
    });

    it('counts users, and refuses a user beyond the org’s Users limit with 403 quota_exceeded', async () => {
      const used = (await entry('api', 'Users'))!.used;
      cli(
        'set-quota',
        '--org-id',
        quotaOrg.org_id,
        '--dimension',
        'api',
        '--name',
        'Users',
        '--limit',
        String(used + 2),
      );
      for (let index = 1; index <= 2; index += 1) {
        const created = await call('/v2/users', {
          token: quotaOrg.clientToken,
          json: { email: uniqueEmail('counted'), display_name: 'Counted', send_activation: false },
        });
        expect(created.status).toBe(201);
        await waitFor('the user counted', async () =>
          (await entry('api', 'Users'))!.used === used + index ? true : undefined,
        );
      }
      const users = await entry('api', 'Users');
      expect(users).toEqual({ dimension: 'api', name: 'Users', used: used + 2, limit: used + 2, unit: 'count' });
      const refused = await call('/v2/users', {
        token: quotaOrg.clientToken,
        json: { email: uniqueEmail('over'), display_name: 'Over', send_activation: false },
      });
      expectProblem(refused, 403, 'quota_exceeded');
    });

    it('refuses requests beyond the org’s API requests of the day with 429 quota_exceeded until midnight UTC', async () => {
      const small = await newOrg('api-quota');
      // Before the org's first request with a token, so no gateway holds its limits from before.
      cli('set-quota', '--org-id', small.org_id, '--dimension', 'api', '--name', 'API requests', '--limit', '2');
      for (let index = 0; index < 2; index += 1) {
        expect((await call('/v2/users?limit=1', { token: small.clientToken })).status).toBe(200);
      }
      const refused = await call('/v2/users?limit=1', { token: small.clientToken });
      expectProblem(refused, 429, 'quota_exceeded');
      const midnight = Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000;
      expect(Math.abs(Date.now() + Number(refused.headers.get('retry-after')) * 1000 - midnight)).toBeLessThan(5_000);
      for (const header of RATE_LIMIT_HEADERS) expect(refused.headers.get(header)).not.toBeNull();
      // The org can still see why: its quota report is served, the refused request not counted in it.
      const report = await call<{ quotas: Quota[] }>('/v2/system/quota?dimension=api', { token: small.clientToken });
      expect(report.status).toBe(200);
      expect(report.body.quotas.find((one) => one.name === 'API requests')).toMatchObject({ limit: 2, used: 3 });
    });

    it('needs system:read, and shows only the caller’s org', async () => {
      expectProblem(await call('/v2/system/quota'), 401, 'unauthenticated');
      const narrow = await issue({
        grant_type: 'password',
        username: quotaOrg.adminEmail,
        password: quotaOrg.adminPassword,
        scope: 'users:read',
      });
      expectProblem(await quota('', narrow.access_token), 403, 'insufficient_scope');
      const theirs = await call<{ org_id: string }>('/v2/system/quota', { token: org.admin.access_token });
      expect(theirs.status).toBe(200);
      expect(theirs.body.org_id).toBe(org.org_id);
    });
  });
});
