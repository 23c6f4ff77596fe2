import { ApiClient, newOrg, TestStack, waitFor } from '@acct/testing';

/** The bound every revocation keeps (README, Token revocation): effective at every process within 1 s. */
const WITHIN_MS = 1000;

/**
 * `rotate-signing-key --withdraw-old`, the runbook's answer to a signing key that may have leaked:
 * whoever holds it signs tokens with any claims for as long as verifiers accept its tokens. The CLI
 * announces the withdrawal, so the gateway and the services refuse those tokens at once, remembered
 * ones included, rather than once their key set is a minute old.
 */
describe('a withdrawn signing key', () => {
  let stack: TestStack;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''));
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('has its tokens refused by the gateway within 1 s, while tokens of the new key are served', async () => {
    const org = await newOrg(api, stack, 'withdrawal');
    const leaked = org.admin.access_token;
    // Verified once: the gateway and identity remember it.
    expect((await api.call('/v2/users/me', { token: leaked })).status).toBe(200);

    stack.cliDirect('rotate-signing-key', '--withdraw-old');
    await waitFor(
      'the token of the withdrawn key refused',
      async () => ((await api.call('/v2/users/me', { token: leaked })).status === 401 ? true : undefined),
      { timeoutMs: WITHIN_MS, intervalMs: 25 },
    );

    const fresh = await api.passwordToken(org.adminEmail, org.adminPassword);
    expect((await api.call('/v2/users/me', { token: fresh.access_token })).status).toBe(200);
  });
});
