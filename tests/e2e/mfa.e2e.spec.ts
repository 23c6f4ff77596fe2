import { execFileSync } from 'node:child_process';

import { Bootstrap, repositoryRoot, request, TestStack } from '@acct/testing';
import pg from 'pg';

interface Answer {
  access_token?: string;
  secret?: string;
  otpauth_uri?: string;
  enabled?: boolean;
  confirmed_at?: string;
  code?: string;
  status?: number;
  error?: string;
  error_description?: string;
}

const EMAIL = 'mfa-admin@acme.test';
const PASSWORD = 'admin-password-1';

/**
 * The TOTP code for `secret` at `epochSeconds`, computed by otplib in a plain Node process: otplib's
 * plugins are ES modules, which Node requires natively but this jest project does not transform.
 */
function totp(secret: string, epochSeconds: number): string {
  const script =
    "process.stdout.write(require('otplib').generateSync({ secret: process.argv[1], epoch: Number(process.argv[2]) }))";
  return execFileSync(process.execPath, ['-e', script, secret, String(epochSeconds)], {
    cwd: repositoryRoot,
    encoding: 'utf8',
  });
}

/** Contract §4 MFA end to end: enrol, confirm, then password logins that need a one-time code. */
describe('MFA (TOTP) through the gateway', () => {
  let stack: TestStack;
  let org: Bootstrap;
  let adminToken: string;
  let secret: string;

  // Each token request from its own address (the gateway trusts X-Forwarded-For from the test), so
  // neither the auth rate-limit tier nor the per-(username, IP) lockout gets in the way.
  let address = 0;
  const token = (body: Record<string, string>) =>
    request<Answer>(stack.url('/v2/auth/token'), {
      body,
      headers: { 'x-forwarded-for': `198.51.100.${(address += 1)}` },
    });
  const login = (mfaCode?: string) =>
    token({ grant_type: 'password', username: EMAIL, password: PASSWORD, ...(mfaCode ? { mfa_code: mfaCode } : {}) });
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    org = stack.cli<Bootstrap>('bootstrap', '--org', 'acme', '--email', EMAIL, '--password', PASSWORD);
    const admin = await login();
    expect(admin.status).toBe(200);
    adminToken = admin.body.access_token!;
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('refuses enrolment by an access token alone: no password 400, a wrong one 403, and nothing enrolled', async () => {
    // Issue 11 item 10: a stolen token cannot bind the thief's authenticator.
    const enrol = (body?: Record<string, unknown>) =>
      request<Answer>(stack.url('/v2/users/me/mfa/totp'), { method: 'POST', token: adminToken, body });
    for (const body of [{}, { password: '' }]) {
      const refused = await enrol(body);
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('validation_failed');
    }
    for (const password of ['wrong-password-1', PASSWORD.toUpperCase()]) {
      const refused = await enrol({ password });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('forbidden');
    }
  });

  it('enrols the signed-in user: 201 with a base32 secret and an otpauth URI naming the account', async () => {
    const enrolled = await request<Answer>(stack.url('/v2/users/me/mfa/totp'), {
      token: adminToken,
      body: { password: PASSWORD },
    });
    expect(enrolled.status).toBe(201);
    expect(enrolled.headers.get('cache-control')).toBe('no-store');
    secret = enrolled.body.secret!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(enrolled.body.otpauth_uri!);
    expect(`${uri.protocol}//${uri.host}`).toBe('otpauth://totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/Account Platform:${EMAIL}`);
    expect(uri.searchParams.get('secret')).toBe(secret);
  });

  it('stores the secret encrypted, not in plain text, in the auth database', async () => {
    const client = new pg.Client({ connectionString: stack.env.AUTH_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ user_id: string; secret: string }>('SELECT user_id, secret FROM mfa_totp');
      expect(rows).toHaveLength(1);
      expect(rows[0].user_id).toBe(org.admin_user_id);
      expect(rows[0].secret).not.toContain(secret);
      expect(rows[0].secret).not.toContain(secret.toLowerCase());
    } finally {
      await client.end();
    }
  });

  it('refuses a wrong confirmation code with 400 invalid_mfa_code, and enables MFA with the right one', async () => {
    const right = totp(secret, now());
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    const refused = await request<Answer>(stack.url('/v2/users/me/mfa/totp/confirm'), {
      token: adminToken,
      body: { code: wrong },
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.code).toBe('invalid_mfa_code');

    const confirmed = await request<Answer>(stack.url('/v2/users/me/mfa/totp/confirm'), {
      token: adminToken,
      body: { code: right },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ enabled: true, confirmed_at: expect.any(String) });
  });

  it('answers 409 mfa_already_enabled to a second enrolment', async () => {
    const again = await request<Answer>(stack.url('/v2/users/me/mfa/totp'), {
      token: adminToken,
      body: { password: PASSWORD },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('mfa_already_enabled');
  });

  it('refuses enrolment to a client_credentials token', async () => {
    const client = await token({
      grant_type: 'client_credentials',
      client_id: org.client_id,
      client_secret: org.client_secret!,
    });
    expect(client.status).toBe(200);
    const refused = await request<Answer>(stack.url('/v2/users/me/mfa/totp'), {
      token: client.body.access_token,
      body: { password: PASSWORD },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
  });

  it('asks for the code (403 mfa_required), accepts a valid one once, and refuses its replay', async () => {
    const missing = await login();
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({ code: 'mfa_required', error: 'mfa_required' });
    expect(missing.body.error_description).toEqual(expect.any(String));

    // The confirmation spent the current step; the next step's code is inside the ±1 step window.
    const next = totp(secret, now() + 30);
    const accepted = await login(next);
    expect(accepted.status).toBe(200);
    expect(accepted.body.access_token).toEqual(expect.any(String));

    const replayed = await login(next);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toMatchObject({ code: 'invalid_grant', error: 'invalid_grant' });
  });

  it('counts the logins by grant and outcome on the auth metrics', async () => {
    const metrics = await (await fetch(stack.opsUrl('auth', '/metrics'))).text();
    const count = (outcome: string) =>
      metrics
        .split('\n')
        .find(
          (line) =>
            line.startsWith('auth_login_attempts_total{') &&
            line.includes('grant_type="password"') &&
            line.includes(`outcome="${outcome}"`),
        )
        ?.split(' ')
        .at(-1);
    expect(count('mfa_required')).toBe('1');
    expect(count('success')).toBe('2');
    expect(count('invalid_grant')).toBe('1');
  });
});
