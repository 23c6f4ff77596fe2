import { createHash, randomBytes } from 'node:crypto';

import { Bootstrap, request, TestStack, totp, waitFor } from '@acct/testing';

const APP = 'https://app.login-page.test/callback';
const ADMIN_PASSWORD = 'login-page-admin-1';
const MEMBER_PASSWORD = 'login-page-member-1';

/**
 * Contract §7: a disabled user cannot sign in and its sessions end. The login page's two steps
 * (password, then the TOTP code with an MFA ticket) must not let a sign-in begun before the disable
 * finish after it.
 */
describe("the login page's second step after the user's sessions were ended", () => {
  let stack: TestStack;
  let adminToken: string;
  let spa: string;
  let ip = 0;
  const nextIp = () => `198.51.100.${(ip = (ip % 250) + 1)}`;
  const call = (path: string, init: Parameters<typeof request>[1] = {}) =>
    request(stack.url(path), { ...init, headers: { 'x-forwarded-for': nextIp(), ...init.headers } });
  const raw = (path: string, init: RequestInit = {}, address = nextIp()) => {
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-for', address);
    return fetch(stack.url(path), { redirect: 'manual', ...init, headers });
  };

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    const org = stack.cli<Bootstrap>(
      ...['bootstrap', '--org', 'login-page', '--email', 'admin@login-page.test', '--password', ADMIN_PASSWORD],
    );
    const login = await call('/v2/auth/token', {
      body: { grant_type: 'password', username: 'admin@login-page.test', password: ADMIN_PASSWORD },
    });
    adminToken = (login.body as { access_token: string }).access_token;
    spa = stack.cli<{ client_id: string }>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Browser app', '--type', 'public'],
      ...['--grant-types', 'authorization_code,refresh_token', '--redirect-uris', APP, '--scopes', 'users:read'],
    ).client_id;
  });

  /** An active member named `email`, with a confirmed TOTP factor: its id, an access token, the secret. */
  async function memberWithTotp(email: string, displayName: string) {
    const created = await call('/v2/users', {
      token: adminToken,
      body: { email, display_name: displayName, password: MEMBER_PASSWORD, send_activation: false },
    });
    const user = created.body as { id: string };
    const reset = await call(`/v2/users/${user.id}/reset-password`, { token: adminToken, body: { send_email: false } });
    await call('/v2/users/me/password', {
      token: (reset.body as { token: string }).token,
      body: { password: MEMBER_PASSWORD },
    });
    const memberLogin = await call('/v2/auth/token', {
      body: { grant_type: 'password', username: email, password: MEMBER_PASSWORD },
    });
    const token = (memberLogin.body as { access_token: string }).access_token;
    const enrolled = await call('/v2/users/me/mfa/totp', { token, body: { password: MEMBER_PASSWORD } });
    const { secret } = enrolled.body as { secret: string };
    const confirmed = await call('/v2/users/me/mfa/totp/confirm', {
      token,
      body: { code: totp(secret, Date.now() - 30_000) },
    });
    expect(confirmed.status).toBe(200);
    return { id: user.id, token, secret };
  }

  /**
   * The login page's password step for `email` (an authorization request with PKCE and `state`, from
   * one address): the PKCE verifier, and the code step that sends the page's MFA ticket with `code`.
   */
  async function passwordStep(email: string, state: string) {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: spa,
      redirect_uri: APP,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const address = nextIp();
    const page = await raw(`/v2/auth/authorize?${query.toString()}`, {}, address);
    expect(page.status).toBe(200);
    const fields = Object.fromEntries(
      [...(await page.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1],
        m[2],
      ]),
    ) as Record<string, string>;
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
    const submit = (form: Record<string, string>) =>
      raw(
        '/v2/auth/authorize',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: new URLSearchParams(form).toString(),
        },
        address,
      );
    const step = await submit({ ...fields, username: email, password: MEMBER_PASSWORD });
    expect(step.status).toBe(200);
    const ticket = /name="mfa_ticket" value="([^"]+)"/.exec(await step.text())![1];
    return { verifier, codeStep: (code: string) => submit({ ...fields, mfa_ticket: ticket, mfa_code: code }) };
  }

  afterAll(async () => {
    await stack?.close();
  });

  it('refuses the code step of a sign-in whose password step came before an admin disabled the user', async () => {
    // An active member with TOTP, and the password step on the login page: the MFA page with its ticket.
    const { id: userId, token: memberToken, secret } = await memberWithTotp('mfa@login-page.test', 'Mfa');
    const { verifier, codeStep: sendCode } = await passwordStep('mfa@login-page.test', 'state-1');

    // The admin disables the user; its sessions end everywhere within a second.
    const disabled = await call(`/v2/users/${userId}/disable`, { method: 'POST', token: adminToken });
    expect(disabled.status).toBe(200);
    await waitFor(
      "the member's sessions ended",
      async () => ((await call('/v2/users/me', { token: memberToken })).status === 401 ? true : undefined),
      { timeoutMs: 5000 },
    );

    // The code step of the sign-in begun before: the form is no longer valid (403), no code, no redirect.
    const codeStep = await sendCode(totp(secret));
    const location = codeStep.headers.get('location');
    const code = location ? new URL(location).searchParams.get('code') : null;
    if (code) {
      // What a code would be worth: tokens for the disabled user.
      const exchanged = await call('/v2/auth/token', {
        body: { grant_type: 'authorization_code', client_id: spa, code, redirect_uri: APP, code_verifier: verifier },
      });
      expect(exchanged.status).toBe(400);
    }
    expect(codeStep.status).toBe(403);
    expect(location).toBeNull();
  });

  it('carries the MFA ticket of a user whose e-mail is as long as an e-mail may be to a code', async () => {
    // 254 characters (contract §3): a 64-character local part and labels of at most 63.
    const email = `${'m'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(56)}.test`;
    expect(email).toHaveLength(254);
    const { secret } = await memberWithTotp(email, 'Long');
    const { verifier, codeStep: sendCode } = await passwordStep(email, 'state-2');

    const codeStep = await sendCode(totp(secret));
    expect(codeStep.status).toBe(303);
    const location = new URL(codeStep.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe('state-2');
    const exchanged = await call('/v2/auth/token', {
      body: {
        grant_type: 'authorization_code',
        client_id: spa,
        code: location.searchParams.get('code'),
        redirect_uri: APP,
        code_verifier: verifier,
      },
    });
    expect(exchanged.status).toBe(200);
  });
});
