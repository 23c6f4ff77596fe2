import { Bootstrap, request, TestStack, totp } from '@acct/testing';

interface Answer {
  access_token?: string;
  token?: string;
  id?: string;
  secret?: string;
  codes?: string[];
  created_at?: string;
  code?: string;
  error?: string;
}

const PASSWORD = 'admin-auth-pass-1';

/**
 * Contract §7's unlock, MFA removal and recovery codes through the real gateway, auth and identity:
 * who may do what (the org's admin; not a member or viewer, 403; not another org's admin, 404), and
 * that each does what it says at the token endpoint.
 */
describe('unlock, MFA removal and recovery codes over HTTP', () => {
  let stack: TestStack;
  let orgA: Bootstrap;
  let adminA: string;
  let adminB: string;
  let member: { id: string; email: string; token: string };
  let viewer: { id: string; email: string; token: string };

  let address = 0;
  const nextIp = () => `198.51.100.${(address = (address % 250) + 1)}`;
  let sequence = 0;
  const freshEmail = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@admin-auth.test`;

  const call = (path: string, init: { method?: string; token?: string; body?: unknown; ip?: string } = {}) =>
    request<Answer>(stack.url(path), { ...init, headers: { 'x-forwarded-for': init.ip ?? nextIp() } });
  const login = (username: string, fields: { password?: string; mfa_code?: string; ip?: string } = {}) =>
    call('/v2/auth/token', {
      ip: fields.ip,
      body: {
        grant_type: 'password',
        username,
        password: fields.password ?? PASSWORD,
        ...(fields.mfa_code ? { mfa_code: fields.mfa_code } : {}),
      },
    });
  /** An active user of org A with `roles`, signed in. */
  async function activeUser(roles: string[]) {
    const email = freshEmail(roles[0]);
    const created = await call('/v2/users', { token: adminA, body: { email, display_name: 'User', roles } });
    expect(created.status).toBe(201);
    const id = created.body.id!;
    const reset = await call(`/v2/users/${id}/reset-password`, { token: adminA, body: { send_email: false } });
    const activated = await call('/v2/users/me/password', { token: reset.body.token, body: { password: PASSWORD } });
    expect(activated.status).toBe(200);
    const signedIn = await login(email);
    expect(signedIn.status).toBe(200);
    return { id, email, token: signedIn.body.access_token! };
  }
  /** Turns TOTP on for the user; answers its secret. */
  async function enableMfa(user: { token: string }) {
    const enrolled = await call('/v2/users/me/mfa/totp', { token: user.token, body: { password: PASSWORD } });
    expect(enrolled.status).toBe(201);
    const secret = enrolled.body.secret!;
    const confirmed = await call('/v2/users/me/mfa/totp/confirm', { token: user.token, body: { code: totp(secret) } });
    expect(confirmed.status).toBe(200);
    return secret;
  }

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    orgA = stack.cli<Bootstrap>('bootstrap', '--org', 'alpha', '--email', 'admin@alpha.test', '--password', PASSWORD);
    stack.cli('bootstrap', '--org', 'beta', '--email', 'admin@beta.test', '--password', PASSWORD);
    for (const group of ['users.write', 'users.read']) {
      stack.cli(
        ...['set-rate-limit', '--org-id', orgA.org_id, '--group', group],
        ...['--rate-per-minute', '60000', '--burst', '10', '--scope', 'per-token'],
      );
    }
    adminA = (await login('admin@alpha.test')).body.access_token!;
    adminB = (await login('admin@beta.test')).body.access_token!;
    member = await activeUser(['member']);
    viewer = await activeUser(['viewer']);
  }, 300_000);

  afterAll(async () => {
    await stack?.close();
  });

  it("unlocks a locked-out user for its org's admin only, and its right password works again", async () => {
    const target = await activeUser(['member']);
    // The lockout counts an IPv6 client by its /64, the auth rate limit by its address: each attempt
    // from its own address of one /64 is one lockout pair without spending one rate-limit bucket.
    let host = 0;
    const attempt = async (password = PASSWORD) => {
      for (;;) {
        const answer = await login(target.email, { password, ip: `2001:db8:14:3::${(host += 1)}` });
        if (answer.body.code !== 'rate_limited') return answer;
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after')) * 1000));
      }
    };
    for (let failure = 0; failure < 5; failure += 1) expect((await attempt('wrong-password')).status).toBe(400);
    const locked = await attempt();
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('login_locked');

    const unlock = (token: string) => call(`/v2/users/${target.id}/lockout`, { method: 'DELETE', token });
    for (const token of [member.token, viewer.token]) {
      const refused = await unlock(token);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('insufficient_scope');
    }
    const foreign = await unlock(adminB);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
    expect((await attempt()).body.code).toBe('login_locked');

    expect((await unlock(adminA)).status).toBe(204);
    expect((await attempt()).status).toBe(200);
  });

  it("removes a user's MFA for its org's admin only: member and viewer 403, another org's admin 404", async () => {
    const target = await activeUser(['member']);
    await enableMfa(target);
    const remove = (token: string) => call(`/v2/users/${target.id}/mfa`, { method: 'DELETE', token });
    for (const token of [member.token, viewer.token]) {
      const refused = await remove(token);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('forbidden');
    }
    const foreign = await remove(adminB);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
    expect((await login(target.email)).body.code).toBe('mfa_required');

    expect((await remove(adminA)).status).toBe(204);
    expect((await login(target.email)).status).toBe(200);
  });

  it('lets the user remove its own MFA only with its password and a current code', async () => {
    const self = await activeUser(['viewer']);
    const secret = await enableMfa(self);
    const remove = (body: Record<string, string>) =>
      call('/v2/users/me/mfa', { method: 'DELETE', token: self.token, body });
    const noBody = await call('/v2/users/me/mfa', { method: 'DELETE', token: self.token });
    expect(noBody.status).toBe(400);
    expect(noBody.body.code).toBe('validation_failed');
    const wrongPassword = await remove({ password: 'not-my-password', mfa_code: totp(secret, Date.now() + 30_000) });
    expect(wrongPassword.status).toBe(403);
    expect(wrongPassword.body.code).toBe('forbidden');
    const wrongCode = await remove({ password: PASSWORD, mfa_code: '000000' });
    expect(wrongCode.status).toBe(400);
    expect(wrongCode.body.code).toBe('invalid_mfa_code');
    expect((await login(self.email)).body.code).toBe('mfa_required');

    // The next step's code: the confirming code's step is spent.
    expect((await remove({ password: PASSWORD, mfa_code: totp(secret, Date.now() + 30_000) })).status).toBe(204);
    expect((await login(self.email)).status).toBe(200);
  });

  it('issues 10 recovery codes, each accepted once at the token endpoint; of parallel logins with one, one wins', async () => {
    const self = await activeUser(['member']);
    await enableMfa(self);
    const created = await call('/v2/users/me/mfa/recovery-codes', { token: self.token, body: { password: PASSWORD } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const codes = created.body.codes!;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);

    expect((await login(self.email, { mfa_code: codes[0] })).status).toBe(200);
    const again = await login(self.email, { mfa_code: codes[0] });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');

    const parallel = await Promise.all(Array.from({ length: 6 }, () => login(self.email, { mfa_code: codes[1] })));
    expect(parallel.map((answer) => answer.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);

    // A new set: the unused codes of the old one stop working.
    const renewed = await call('/v2/users/me/mfa/recovery-codes', { token: self.token, body: { password: PASSWORD } });
    expect(renewed.status).toBe(201);
    expect((await login(self.email, { mfa_code: codes[2] })).status).toBe(400);
    expect((await login(self.email, { mfa_code: renewed.body.codes![2] })).status).toBe(200);
  });

  it('refuses recovery codes without two-step verification (409) and with a wrong password (403)', async () => {
    const noMfa = await call('/v2/users/me/mfa/recovery-codes', { token: member.token, body: { password: PASSWORD } });
    expect(noMfa.status).toBe(409);
    expect(noMfa.body.code).toBe('mfa_not_enrolled');
    const wrong = await call('/v2/users/me/mfa/recovery-codes', { token: member.token, body: { password: 'nope-1' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe('forbidden');
  });
});
