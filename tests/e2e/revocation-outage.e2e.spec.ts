import { ApiClient, DedicatedServer, expectProblem, freshIp, jwtPart, TestStack, waitFor } from '@acct/testing';
import Redis from 'ioredis';

/**
 * Revocations made while Redis is away reach the processes started after it is back (README
 * "Outages", "Token revocation"):
 * - ending a session answers 503 and leaves it live, so the retry once Redis is back ends it: 204, and
 *   its access tokens are refused by every process. (It was ended in Postgres before its revocation
 *   failed: the retry found no live session and answered 404, and the revocation never reached Redis.)
 * - a refresh token reused after its grace window: the family is revoked in Postgres and the reuse
 *   refused at once, and the revocation of its access tokens, which Redis could not store then, is
 *   stored once it is back. (It was only logged.)
 * Either way a gateway and identity started later accepted the tokens until they expired.
 */
describe('revocations made while Redis is away', () => {
  let redis: DedicatedServer;
  let stack: TestStack;
  let api: ApiClient;
  const password = 'admin-password-1';

  beforeAll(async () => {
    redis = await DedicatedServer.redis();
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      redisUrl: redis.url,
      env: { TRUSTED_PROXIES: '127.0.0.1', REFRESH_GRACE_SECONDS: '0' },
    });
    api = new ApiClient(stack.url(''), { ip: freshIp });
    for (const org of ['session-outage', 'reuse-outage']) {
      stack.cli('bootstrap', '--org', org, '--email', `admin@${org}.test`, '--password', password);
    }
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
  });

  /** What processes started now answer for `accessToken`: they know the revocations only from Redis. */
  async function answerOfNewProcesses(accessToken: string): Promise<number> {
    for (const app of ['identity', 'gateway'] as const) {
      await stack.stopApp(app);
      await stack.startApp(app);
    }
    const me = await waitFor('an answer once the new processes read the revocations', async () => {
      const answer = await api.call('/v2/users/me', { token: accessToken });
      return answer.status === 503 ? undefined : answer;
    });
    return me.status;
  }

  it('ending a session answers 503, then the retry ends the session and its access tokens everywhere', async () => {
    const username = 'admin@session-outage.test';
    const admin = await api.passwordToken(username, password);
    const ended = await api.passwordToken(username, password);
    const sid = jwtPart(ended.access_token, 1).sid as string;
    const end = () => api.call(`/v2/users/me/sessions/${sid}`, { method: 'DELETE', token: admin.access_token });

    await redis.stop();
    expectProblem(await end(), 503, 'service_unavailable');
    await redis.start();

    const retried = await waitFor('the retry answered other than 503', async () => {
      const answer = await end();
      return answer.status === 503 ? undefined : answer;
    });
    expect({ status: retried.status, body: retried.text }).toEqual({ status: 204, body: '' });
    expect(await answerOfNewProcesses(ended.access_token)).toBe(401);
  });

  it('a reused refresh token’s family revocation is stored once Redis is back, so processes started later refuse its tokens', async () => {
    const first = await api.passwordToken('admin@reuse-outage.test', password);
    const refreshToken = first.refresh_token ?? '';
    const rotated = await api.issue({ grant_type: 'refresh_token', refresh_token: refreshToken });
    await new Promise((resolve) => setTimeout(resolve, 50));

    await redis.stop();
    const reused = await api.tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect({ status: reused.status, error: reused.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    await redis.start();

    const client = new Redis(redis.url);
    try {
      await waitFor('the family’s revocation in Redis', async () =>
        (await client.keys('*revocations')).length > 0 ? true : undefined,
      );
    } finally {
      client.disconnect();
    }
    expect(await answerOfNewProcesses(rotated.access_token)).toBe(401);
  });
});
