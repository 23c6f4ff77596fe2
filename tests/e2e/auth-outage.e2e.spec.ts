import { ApiClient, expectProblem, newOrg, Problem, TestStack, waitFor } from '@acct/testing';

/**
 * README "Outages", auth away: requests with a token already issued are served while the verifying
 * processes hold auth's keys. A service that starts while auth is away (a restart, a new replica)
 * holds none: it cannot verify a token, which is a dependency outage (503 with Retry-After), not an
 * internal error, and it serves again once auth answers, without a restart.
 */
describe('a service started while auth is away', () => {
  let stack: TestStack;
  let api: ApiClient;
  let token: string;

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''));
    token = (await newOrg(api, stack, 'auth-outage')).admin.access_token;
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers 503 with Retry-After until auth answers, then serves the same token', async () => {
    expect((await api.call('/v2/users/me', { token })).status).toBe(200);
    await stack.stopApp('auth', 'SIGKILL');
    await stack.stopApp('identity');
    await stack.startApp('identity');

    // Until the gateway's channel reaches the new identity, the gateway itself says identity is away.
    const answer = await waitFor('an answer from the restarted identity', async () => {
      const me = await api.call<Problem>('/v2/users/me', { token });
      return me.status === 503 && /identity/.test(me.body.detail) ? undefined : me;
    });
    expectProblem(answer, 503, 'service_unavailable');
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    await stack.startApp('auth');
    const served = await waitFor('the token served again', async () => {
      const me = await api.call('/v2/users/me', { token });
      return me.status === 503 ? undefined : me;
    });
    expect(served.status).toBe(200);
  });
});
