import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';

import {
  call,
  cli,
  expectProblem,
  freshIp,
  gateway,
  issue,
  newOrg,
  raiseLimit,
  tokenRequest,
  uniqueEmail,
  User,
} from './support/client';

/** RFC 6238 TOTP (SHA-1, 30 s, 6 digits) of a base32 secret; `stepOffset` moves to a neighbouring step. */
function totp(secret: string, stepOffset = 0): string {
  let bits = '';
  for (const character of secret.replace(/=+$/, '').toUpperCase()) {
    bits += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(character).toString(2).padStart(5, '0');
  }
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 1000 / 30) + stepOffset));
  const digest = createHmac('sha1', key).update(counter).digest();
  const offset = digest[digest.length - 1] & 0x0f;
  return String((digest.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

const PASSWORD = 'member-password-1';
const REDIRECT = 'https://admin-auth.acceptance.test/callback';

/**
 * Contract §7 from outside: an admin unlocks a locked-out user and removes a lost authenticator; a
 * user turns its own MFA off with its password and a code, and keeps recovery codes that each work
 * once, at the token endpoint and on the login page.
 */
describe('unlock, MFA removal and recovery codes (contract §7)', () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;

  /** An active user of `org` with `role`, and its own access token. */
  async function activeUser(role = 'member') {
    const email = uniqueEmail(role);
    const created = await call<User>('/v2/users', {
      token: org.clientToken,
      json: { email, display_name: role, roles: [role], send_activation: false },
    });
    expect(created.status).toBe(201);
    const reset = await call<{ token: string }>(`/v2/users/${created.body.id}/reset-password`, {
      token: org.clientToken,
      json: { send_email: false },
    });
    expect(
      (await call('/v2/users/me/password', { token: reset.body.token, json: { password: PASSWORD } })).status,
    ).toBe(200);
    const { access_token: token } = await issue({ grant_type: 'password', username: email, password: PASSWORD });
    return { id: created.body.id, email, token };
  }
  /** Turns TOTP on; answers the secret. */
  async function enableMfa(user: { token: string }) {
    const enrolled = await call<{ secret: string }>('/v2/users/me/mfa/totp', {
      token: user.token,
      json: { password: PASSWORD },
    });
    expect(enrolled.status).toBe(201);
    const confirmed = await call('/v2/users/me/mfa/totp/confirm', {
      token: user.token,
      json: { code: totp(enrolled.body.secret) },
    });
    expect(confirmed.status).toBe(200);
    return enrolled.body.secret;
  }
  const login = (username: string, fields: { password?: string; mfa_code?: string; ip?: string } = {}) =>
    tokenRequest(
      {
        grant_type: 'password',
        username,
        password: fields.password ?? PASSWORD,
        ...(fields.mfa_code ? { mfa_code: fields.mfa_code } : {}),
      },
      { ip: fields.ip },
    );

  beforeAll(async () => {
    [org, other] = [await newOrg('admin-auth'), await newOrg('admin-auth-other')];
    raiseLimit(org.org_id, 'users.write');
    raiseLimit(org.org_id, 'users.read');
  });

  it("DELETE /v2/users/{id}/lockout: the org's admin unlocks a locked-out user; a member and another org's admin cannot", async () => {
    const user = await activeUser();
    const member = await activeUser();
    // One lockout pair (an IPv6 client counts by its /64), a fresh rate-limit bucket per address where
    // the limiter allows it; else wait as Retry-After says: the lockout is the subject here.
    const prefix = `2001:db8:${randomInt(0xffff).toString(16)}:${randomInt(0xffff).toString(16)}`;
    let host = 0;
    const attempt = async (password = PASSWORD) => {
      for (;;) {
        const answer = await login(user.email, { password, ip: `${prefix}::${(host += 1)}` });
        if (answer.body.code !== 'rate_limited') return answer;
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after')) * 1000));
      }
    };
    for (let failure = 0; failure < 5; failure += 1) {
      expectProblem(await attempt('not-the-password'), 400, 'invalid_grant');
    }
    const locked = expectProblem(await attempt(), 429, 'login_locked');
    expect(locked.error).toBe('login_locked');

    const unlock = (token: string) => call(`/v2/users/${user.id}/lockout`, { method: 'DELETE', token });
    expectProblem(await unlock(member.token), 403, 'insufficient_scope');
    expectProblem(await unlock(other.admin.access_token), 404, 'not_found');
    expectProblem(await unlock(other.clientToken), 404, 'not_found');
    expectProblem(await attempt(), 429, 'login_locked');

    const unlocked = await unlock(org.admin.access_token);
    expect({ status: unlocked.status, text: unlocked.text }).toEqual({ status: 204, text: '' });
    expect((await attempt()).status).toBe(200);
  }, 120_000);

  it('DELETE /v2/users/{id}/lockout takes users:write alone, the scope it is documented with', async () => {
    const user = await activeUser();
    const narrowed = [
      await issue({
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
        scope: 'users:write',
      }),
      await issue({
        grant_type: 'client_credentials',
        client_id: org.client_id,
        client_secret: org.client_secret ?? '',
        scope: 'users:write',
      }),
    ];
    for (const { access_token: token, scope } of narrowed) {
      expect(scope).toBe('users:write');
      const unlocked = await call(`/v2/users/${user.id}/lockout`, { method: 'DELETE', token });
      expect({ status: unlocked.status, text: unlocked.text }).toEqual({ status: 204, text: '' });
    }
  });

  it("DELETE /v2/users/{id}/mfa: the org's admin removes a lost authenticator; a member 403, another org 404", async () => {
    const user = await activeUser();
    const member = await activeUser();
    await enableMfa(user);
    expectProblem(await login(user.email), 403, 'mfa_required');

    const remove = (token: string) => call(`/v2/users/${user.id}/mfa`, { method: 'DELETE', token });
    expectProblem(await remove(member.token), 403, 'forbidden');
    expectProblem(await remove(other.admin.access_token), 404, 'not_found');
    expectProblem(await login(user.email), 403, 'mfa_required');

    const removed = await remove(org.admin.access_token);
    expect({ status: removed.status, text: removed.text }).toEqual({ status: 204, text: '' });
    expect((await login(user.email)).status).toBe(200);
    // Enrolling again starts from scratch.
    expect((await call('/v2/users/me/mfa/totp', { token: user.token, json: { password: PASSWORD } })).status).toBe(201);
  });

  it('DELETE /v2/users/me/mfa: the user itself, with its password and a current code only', async () => {
    const user = await activeUser('viewer');
    const secret = await enableMfa(user);
    const remove = (json?: Record<string, string>) =>
      call('/v2/users/me/mfa', { method: 'DELETE', token: user.token, json });

    const missing = expectProblem(await remove(), 400, 'validation_failed');
    expect(missing.errors?.map((error) => error.field).sort()).toEqual(['mfa_code', 'password']);
    expectProblem(await remove({ password: 'not-the-password', mfa_code: totp(secret, 1) }), 403, 'forbidden');
    expectProblem(await remove({ password: PASSWORD, mfa_code: '000000' }), 400, 'invalid_mfa_code');
    expectProblem(
      await remove({ password: PASSWORD, mfa_code: totp(secret, 1), extra: 'x' }),
      400,
      'validation_failed',
    );
    expectProblem(await login(user.email), 403, 'mfa_required');

    const removed = await remove({ password: PASSWORD, mfa_code: totp(secret, 1) });
    expect(removed.status).toBe(204);
    expect((await login(user.email)).status).toBe(200);
  });

  it('POST /v2/users/me/mfa/recovery-codes: 10 codes, shown once, each accepted once as mfa_code; a new set voids the old', async () => {
    const user = await activeUser();
    expectProblem(
      await call('/v2/users/me/mfa/recovery-codes', { token: user.token, json: { password: PASSWORD } }),
      409,
      'mfa_not_enrolled',
    );
    await enableMfa(user);
    expectProblem(
      await call('/v2/users/me/mfa/recovery-codes', { token: user.token, json: { password: 'wrong-password' } }),
      403,
      'forbidden',
    );
    const created = await call<{ codes: string[]; created_at: string }>('/v2/users/me/mfa/recovery-codes', {
      token: user.token,
      json: { password: PASSWORD },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(created.body).sort()).toEqual(['codes', 'created_at']);
    const { codes } = created.body;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);

    expect((await login(user.email, { mfa_code: codes[0] })).status).toBe(200);
    expectProblem(await login(user.email, { mfa_code: codes[0] }), 400, 'invalid_grant');
    // Typed in lower case without dashes: the same code.
    expect((await login(user.email, { mfa_code: codes[1].replaceAll('-', '').toLowerCase() })).status).toBe(200);

    // Many logins with one code at once: exactly one gets a token.
    const racing = await Promise.all(Array.from({ length: 6 }, () => login(user.email, { mfa_code: codes[2] })));
    expect(racing.map((answer) => answer.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);

    const renewed = await call<{ codes: string[] }>('/v2/users/me/mfa/recovery-codes', {
      token: user.token,
      json: { password: PASSWORD },
    });
    expect(renewed.status).toBe(201);
    expectProblem(await login(user.email, { mfa_code: codes[3] }), 400, 'invalid_grant');
    expect((await login(user.email, { mfa_code: renewed.body.codes[3] })).status).toBe(200);
  });

  describe('the login page and the authorization_code grant', () => {
    let spa: string;
    const pkce = () => {
      const verifier = randomBytes(32).toString('base64url');
      return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
    };
    const browser = (path: string, init: RequestInit, ip: string) => {
      const headers = new Headers(init.headers);
      headers.set('x-forwarded-for', ip);
      return fetch(gateway(path), { redirect: 'manual', ...init, headers });
    };
    const hiddenFields = (html: string) =>
      Object.fromEntries(
        [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [
          match[1],
          match[2],
        ]),
      );

    /** Signs in on the login page (with `mfaCode` for the second step, when asked); the code and verifier. */
    async function signIn(email: string, mfaCode?: string) {
      const { verifier, challenge } = pkce();
      const ip = freshIp();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: spa,
        redirect_uri: REDIRECT,
        scope: 'users:read',
        state: 'st4te',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const page = await browser(`/v2/auth/authorize?${query.toString()}`, {}, ip);
      expect(page.status).toBe(200);
      const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
      const post = (fields: Record<string, string>) =>
        browser(
          '/v2/auth/authorize',
          {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
            body: new URLSearchParams(fields).toString(),
          },
          ip,
        );
      let answer = await post({ ...hiddenFields(await page.text()), username: email, password: PASSWORD });
      if (mfaCode !== undefined) {
        expect(answer.status).toBe(200);
        answer = await post({ ...hiddenFields(await answer.text()), mfa_code: mfaCode });
      }
      return { answer, verifier };
    }

    beforeAll(() => {
      spa = cli<{ client_id: string }>(
        ...['create-client', '--org-id', org.org_id, '--name', 'Admin-auth SPA', '--type', 'public'],
        ...['--grant-types', 'authorization_code,refresh_token', '--redirect-uris', REDIRECT, '--scopes', 'users:read'],
      ).client_id;
    });

    it('takes a recovery code in the second step of the login page, once', async () => {
      const user = await activeUser();
      await enableMfa(user);
      const { codes } = (
        await call<{ codes: string[] }>('/v2/users/me/mfa/recovery-codes', {
          token: user.token,
          json: { password: PASSWORD },
        })
      ).body;
      const first = await signIn(user.email, codes[4]);
      expect(first.answer.status).toBe(303);
      expect(new URL(first.answer.headers.get('location')!).searchParams.get('code')).toMatch(/^[\w-]{43}$/);
      const again = await signIn(user.email, codes[4]);
      expect(again.answer.status).toBe(400);
    });

    it("records the sign-in's IP, device id and user agent on the session the code exchange starts", async () => {
      const user = await activeUser();
      const { answer, verifier } = await signIn(user.email);
      expect(answer.status).toBe(303);
      const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
      const ip = freshIp();
      const exchanged = await call<{ access_token: string }>('/v2/auth/token', {
        ip,
        headers: { 'x-device-id': 'laptop-42', 'user-agent': 'AcceptanceBrowser/1.0' },
        form: {
          grant_type: 'authorization_code',
          client_id: spa,
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        },
      });
      expect(exchanged.status).toBe(200);
      const sessions = await call<{ items: Array<Record<string, unknown>> }>('/v2/users/me/sessions', {
        token: exchanged.body.access_token,
      });
      expect(sessions.status).toBe(200);
      expect(sessions.body.items).toContainEqual(
        expect.objectContaining({ client_id: spa, ip, device_id: 'laptop-42', user_agent: 'AcceptanceBrowser/1.0' }),
      );
    });
  });
});
