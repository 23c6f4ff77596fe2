import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import {
  Bootstrap,
  LocalObjectStorage,
  repositoryRoot,
  request,
  SmtpCatcher,
  TestStack,
  totp,
  waitFor,
} from '@acct/testing';

const ADMIN_EMAIL = 'admin@log-secrets.test';
const ADMIN_PASSWORD = 'log-secrets-admin-password-1';
const MEMBER_PASSWORD = 'log-secrets-member-password-1';
const APP = 'https://app.log-secrets.test/callback';
const GATEWAY_SECRET = `gateway-secret-${randomBytes(16).toString('hex')}`;
/** How long a piece of a secret must be to count as a trace of it. */
const PIECE = 12;

/**
 * Every flow that carries a secret, run with LOG_LEVEL=debug: no password, client secret, refresh
 * token, authorization code, PKCE verifier, one-time token, TOTP secret, recovery code or the
 * gateway's own secret may reach any process's log (the stack writes them under .data/test-logs), nor
 * the login audit or the admin-action audit an org's admins read.
 */
describe('secrets never reach the logs or the audits (LOG_LEVEL=debug)', () => {
  let stack: TestStack;
  let storage: LocalObjectStorage;
  let smtp: SmtpCatcher;
  let org: Bootstrap;
  const secrets = new Map<string, string>();
  const keep = (name: string, value: string | undefined | null) => {
    expect(typeof value).toBe('string');
    secrets.set(name, value!);
    return value!;
  };
  let ip = 0;
  const call = (pathAndQuery: string, init: Parameters<typeof request>[1] = {}) =>
    request<Record<string, unknown>>(stack.url(pathAndQuery), {
      ...init,
      headers: { 'x-forwarded-for': `198.51.100.${(ip = (ip % 250) + 1)}`, ...init.headers },
    });

  beforeAll(async () => {
    [storage, smtp] = await Promise.all([LocalObjectStorage.start(), SmtpCatcher.start()]);
    stack = await TestStack.start({
      s3Endpoint: storage.endpoint,
      env: {
        LOG_LEVEL: 'debug',
        SMTP_URL: smtp.url,
        TRUSTED_PROXIES: '127.0.0.1',
        GATEWAY_CLIENT_SECRET: GATEWAY_SECRET,
      },
    });
    org = stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      'log-secrets',
      '--email',
      ADMIN_EMAIL,
      '--password',
      ADMIN_PASSWORD,
    );
  });

  afterAll(async () => {
    await stack?.close();
    await Promise.all([storage?.dispose(), smtp?.close()]);
  });

  it('keeps every secret of every flow out of every log line and audit entry', async () => {
    keep('gateway secret', GATEWAY_SECRET);
    keep('admin password', ADMIN_PASSWORD);
    keep('client secret', org.client_secret);

    // client_credentials, in the body and with HTTP Basic; a wrong secret too.
    const basic = Buffer.from(`${org.client_id}:${org.client_secret}`).toString('base64');
    expect(
      (
        await call('/v2/auth/token', {
          headers: { authorization: `Basic ${basic}` },
          body: { grant_type: 'client_credentials' },
        })
      ).status,
    ).toBe(200);
    const client = await call('/v2/auth/token', {
      body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret },
    });
    expect(client.status).toBe(200);
    const wrongSecret = keep('wrong client secret', randomBytes(32).toString('base64url'));
    await call('/v2/auth/token', {
      body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: wrongSecret },
    });

    // The password grant (and a wrong password), a refresh.
    const login = await call('/v2/auth/token', {
      body: { grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    const adminToken = login.body.access_token as string;
    keep('refresh token', login.body.refresh_token as string);
    await call('/v2/auth/token', {
      body: { grant_type: 'password', username: ADMIN_EMAIL, password: keep('wrong password', 'wrong-password-Zx81') },
    });
    const refreshed = await call('/v2/auth/token', {
      body: { grant_type: 'refresh_token', refresh_token: login.body.refresh_token as string },
    });
    expect(refreshed.status).toBe(200);
    keep('rotated refresh token', refreshed.body.refresh_token as string);

    // A user created with a password, its one-time token, the activation page and its check.
    const created = await call('/v2/users', {
      token: adminToken,
      body: {
        email: 'member@log-secrets.test',
        display_name: 'Member',
        password: keep('initial password', 'initial-password-Qw3'),
        send_activation: false,
      },
    });
    expect(created.status).toBe(201);
    const memberId = created.body.id as string;
    const reset = await call(`/v2/users/${memberId}/reset-password`, {
      token: adminToken,
      body: { send_email: false },
    });
    expect(reset.status).toBe(200);
    const oneTime = keep('one-time token', reset.body.token as string);
    expect((await fetch(stack.url(`/activate?token=${oneTime}`))).status).toBe(200);
    expect(
      (await fetch(stack.url('/activate/check'), { headers: { authorization: `Bearer ${oneTime}` } })).status,
    ).toBe(204);
    keep('member password', MEMBER_PASSWORD);
    const set = await call('/v2/users/me/password', { token: oneTime, body: { password: MEMBER_PASSWORD } });
    expect(set.status).toBe(200);
    await call('/v2/users/me/password', { token: oneTime, body: { password: MEMBER_PASSWORD } });

    // The links that travel by e-mail (identity's events, the mailer): an activation and a reset.
    const mailedToken = async (address: string, count: number) => {
      const mails = await waitFor('the e-mail', () =>
        smtp.to(address).length >= count ? smtp.to(address) : undefined,
      );
      const link = /\/activate\?token=([A-Za-z0-9_%-]+)/.exec(mails[count - 1].text)![1];
      return decodeURIComponent(link);
    };
    const invited = await call('/v2/users', {
      token: adminToken,
      body: { email: 'invited@log-secrets.test', display_name: 'Invited' },
    });
    expect(invited.status).toBe(201);
    const activation = keep('activation token', await mailedToken('invited@log-secrets.test', 1));
    expect(
      (await call('/v2/users/me/password', { token: activation, body: { password: 'invited-password-1' } })).status,
    ).toBe(200);
    keep('invited password', 'invited-password-1');
    const mailedReset = await call(`/v2/users/${invited.body.id as string}/reset-password`, {
      token: adminToken,
      body: {},
    });
    expect(mailedReset.status).toBe(202);
    const resetToken = keep('mailed reset token', await mailedToken('invited@log-secrets.test', 2));
    expect(
      (await call('/v2/users/me/password', { token: resetToken, body: { password: 'invited-password-2' } })).status,
    ).toBe(200);
    keep('reset password', 'invited-password-2');

    // MFA: enrolment, confirmation, recovery codes, logins with a code and with a recovery code.
    const member = await call('/v2/auth/token', {
      body: { grant_type: 'password', username: 'member@log-secrets.test', password: MEMBER_PASSWORD },
    });
    expect(member.status).toBe(200);
    const memberToken = member.body.access_token as string;
    const enrolled = await call('/v2/users/me/mfa/totp', { token: memberToken, body: { password: MEMBER_PASSWORD } });
    expect(enrolled.status).toBe(201);
    const totpSecret = keep('TOTP secret', enrolled.body.secret as string);
    const confirmed = await call('/v2/users/me/mfa/totp/confirm', {
      token: memberToken,
      body: { code: totp(totpSecret) },
    });
    expect(confirmed.status).toBe(200);
    const codes = await call('/v2/users/me/mfa/recovery-codes', {
      token: memberToken,
      body: { password: MEMBER_PASSWORD },
    });
    expect(codes.status).toBe(201);
    const recoveryCodes = codes.body.codes as string[];
    recoveryCodes.forEach((code, index) => keep(`recovery code ${index}`, code));
    const withRecovery = await call('/v2/auth/token', {
      body: {
        grant_type: 'password',
        username: 'member@log-secrets.test',
        password: MEMBER_PASSWORD,
        mfa_code: recoveryCodes[0],
      },
    });
    expect(withRecovery.status).toBe(200);
    keep('MFA login refresh token', withRecovery.body.refresh_token as string);

    // The authorization code flow with PKCE through the login page, then revocation and introspection.
    const spa = stack.cli<{ client_id: string }>(
      ...['create-client', '--org-id', org.org_id, '--name', 'SPA', '--type', 'public'],
      ...['--grant-types', 'authorization_code,refresh_token', '--redirect-uris', APP, '--scopes', 'users:read'],
    );
    const verifier = keep('code verifier', randomBytes(32).toString('base64url'));
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: spa.client_id,
      redirect_uri: APP,
      scope: 'users:read',
      state: 'state-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const page = await fetch(stack.url(`/v2/auth/authorize?${query.toString()}`));
    expect(page.status).toBe(200);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
    const fields = Object.fromEntries(
      [...(await page.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1],
        m[2],
      ]),
    ) as Record<string, string>;
    const submit = (form: Record<string, string>) =>
      fetch(stack.url('/v2/auth/authorize'), {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams(form).toString(),
      });
    const step = await submit({ ...fields, username: 'member@log-secrets.test', password: MEMBER_PASSWORD });
    expect(step.status).toBe(200);
    const ticket = /name="mfa_ticket" value="([^"]+)"/.exec(await step.text())![1];
    const signedIn = await submit({ ...fields, mfa_ticket: ticket, mfa_code: recoveryCodes[1] });
    expect(signedIn.status).toBe(303);
    const code = keep('authorization code', new URL(signedIn.headers.get('location')!).searchParams.get('code'));
    const exchanged = await call('/v2/auth/token', {
      body: {
        grant_type: 'authorization_code',
        client_id: spa.client_id,
        code,
        redirect_uri: APP,
        code_verifier: verifier,
      },
    });
    expect(exchanged.status).toBe(200);
    const spaRefresh = keep('code flow refresh token', exchanged.body.refresh_token as string);
    // A second use of the code (refused, and its tokens revoked).
    await call('/v2/auth/token', {
      body: {
        grant_type: 'authorization_code',
        client_id: spa.client_id,
        code,
        redirect_uri: APP,
        code_verifier: verifier,
      },
    });
    const introspected = await call('/v2/auth/introspect', {
      headers: { authorization: `Basic ${basic}` },
      body: { token: withRecovery.body.refresh_token as string },
    });
    expect(introspected.status).toBe(200);
    expect((await call('/v2/auth/revoke', { body: { token: spaRefresh, client_id: spa.client_id } })).status).toBe(200);

    // What the processes wrote (and the audits recorded), once their buffered lines are out.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const audits = [];
    for (const audit of ['/v2/audit/logins?limit=100', '/v2/audit/events?limit=100']) {
      const answer = await call(audit, { token: adminToken });
      expect(answer.status).toBe(200);
      expect((answer.body.items as unknown[]).length).toBeGreaterThan(0);
      audits.push({ name: audit, text: JSON.stringify(answer.body) });
    }
    const logDir = path.join(repositoryRoot, '.data', 'test-logs');
    const logs = fs
      .readdirSync(logDir)
      .filter((name) => name.startsWith(`${stack.ports.http}-`))
      .map((name) => ({ name, text: fs.readFileSync(path.join(logDir, name), 'utf8') }));
    expect(logs.map((log) => log.name).sort()).toEqual(
      ['auth', 'gateway', 'identity', 'mailer', 'platform'].map((app) => `${stack.ports.http}-${app}.log`),
    );
    logs.push(...audits);
    const found: string[] = [];
    for (const [name, secret] of secrets) {
      const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
      for (const form of forms) {
        const length = Math.min(PIECE, form.length);
        for (let index = 0; index + length <= form.length; index += 1) {
          const piece = form.slice(index, index + length);
          const log = logs.find((candidate) => candidate.text.includes(piece));
          if (log) {
            const line = log.text.split('\n').find((candidate) => candidate.includes(piece));
            found.push(`${name} in ${log.name}: ${line}`);
            break;
          }
        }
      }
    }
    expect(found).toEqual([]);
  }, 180_000);
});
