import { createHash, randomBytes } from 'node:crypto';

import { request, TestStack } from '@acct/testing';

interface Bootstrap {
  org_id: string;
}

const ADMIN_PASSWORD = 'admin-pass-1';
const PASSWORD = 'member-pass-1';
/** The account-wide ceiling: failures an hour on one username across all IPs (contract §4, ASVS 2.2.1). */
const CEILING = 100;
const APP = 'https://app.devices.test/callback';
const DEVICE_COOKIE_MAX_AGE = 90 * 24 * 60 * 60;

/** A JWT's parts with one of them changed. */
const withPart = (token: string, index: number, part: string) =>
  token
    .split('.')
    .map((value, position) => (position === index ? part : value))
    .join('.');

/**
 * Issue 11 item 7: the ceiling's exemption belongs to a device credential auth issues at a successful
 * login (the `X-Device-Token` response header for API clients, an HttpOnly cookie for the login page),
 * not to an `X-Device-Id` the client picks. Once an account's hourly budget of failures is spent, only
 * a known IP or a genuine credential issued to that account still gets in.
 */
describe('the account-wide ceiling exempts device credentials, not device ids', () => {
  let stack: TestStack;
  let adminToken: string;
  let spaClientId: string;
  let addresses = 0;
  /** Every request from an IP never seen before: neither the per-IP tier nor the pair lockout interferes. */
  const freshIp = () => {
    addresses += 1;
    return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
  };
  let sequence = 0;

  const login = (username: string, password: string, headers: Record<string, string> = {}) =>
    request<Record<string, unknown>>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'password', username, password },
      headers: { 'x-forwarded-for': freshIp(), ...headers },
    });

  async function activeUser(label: string): Promise<string> {
    const email = `${label}-${Date.now()}-${(sequence += 1)}@devices.test`;
    const created = await request<{ id: string }>(stack.url('/v2/users'), {
      token: adminToken,
      body: { email, display_name: label, send_activation: false },
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(created.status).toBe(201);
    const reset = await request<{ token: string }>(stack.url(`/v2/users/${created.body.id}/reset-password`), {
      token: adminToken,
      body: { send_email: false },
      headers: { 'x-forwarded-for': freshIp() },
    });
    const activated = await request(stack.url('/v2/users/me/password'), {
      token: reset.body.token,
      body: { password: PASSWORD },
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(activated.status).toBe(200);
    return email;
  }

  /** Spends the account's hourly budget: one wrong password from each of 100 new IPs. */
  async function spendBudget(username: string): Promise<void> {
    for (let attempt = 0; attempt < CEILING; attempt += 1) {
      expect((await login(username, 'wrong-pass-1')).body.code).toBe('invalid_grant');
    }
    expect((await login(username, PASSWORD)).body.code).toBe('login_locked');
  }

  /** The login page's form fields and CSRF cookie, as a browser loads them. */
  async function loginPage(): Promise<{ fields: Record<string, string>; csrfCookie: string }> {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: spaClientId,
      redirect_uri: APP,
      scope: 'users:read',
      state: 'state-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const page = await fetch(stack.url(`/v2/auth/authorize?${query.toString()}`), {
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [
        match[1],
        match[2].replace(/&amp;/g, '&'),
      ]),
    );
    return { fields, csrfCookie: (page.headers.get('set-cookie') ?? '').split(';')[0] };
  }

  /** Signs in on the login page with the browser's cookies; the raw answer (303 on success). */
  async function signIn(username: string, deviceCookie?: string): Promise<Response> {
    const { fields, csrfCookie } = await loginPage();
    return fetch(stack.url('/v2/auth/authorize'), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': freshIp(),
        cookie: [csrfCookie, ...(deviceCookie ? [`device_token=${deviceCookie}`] : [])].join('; '),
      },
      body: new URLSearchParams({ ...fields, username, password: PASSWORD }).toString(),
    });
  }

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    const org = stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      'devices',
      '--email',
      'admin@devices.test',
      '--password',
      ADMIN_PASSWORD,
    );
    const admin = await login('admin@devices.test', ADMIN_PASSWORD);
    expect(admin.status).toBe(200);
    adminToken = admin.body.access_token as string;
    spaClientId = stack.cli<{ client_id: string }>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Browser app', '--type', 'public'],
      ...['--grant-types', 'authorization_code', '--redirect-uris', APP, '--scopes', 'users:read'],
    ).client_id;
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('returns a device credential in X-Device-Token at a password login, beside an unchanged token set', async () => {
    const username = await activeUser('fresh');
    const answer = await login(username, PASSWORD);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual([
      'access_token',
      'expires_in',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    expect(answer.headers.get('x-device-token')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // Other grants issue none: a client is no device of an account.
    const refreshed = await request(stack.url('/v2/auth/token'), {
      body: { grant_type: 'refresh_token', refresh_token: answer.body.refresh_token },
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get('x-device-token')).toBeNull();
  });

  it('exempts a valid credential of the account, not a guessed X-Device-Id, another account’s or a tampered one', async () => {
    const ada = await activeUser('ada');
    const grace = await activeUser('grace');
    const phone = await login(ada, PASSWORD, { 'x-device-id': 'ada-phone' });
    expect(phone.status).toBe(200);
    const credential = phone.headers.get('x-device-token')!;
    const graceCredential = (await login(grace, PASSWORD)).headers.get('x-device-token')!;
    await spendBudget(ada);

    const [header, payload, signature] = credential.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const notExempt: Array<[string, Record<string, string>]> = [
      ['no device at all', {}],
      ['the X-Device-Id the owner logged in with', { 'x-device-id': 'ada-phone' }],
      ['a guessed X-Device-Id', { 'x-device-id': randomBytes(8).toString('hex') }],
      ["another account's credential", { 'x-device-token': graceCredential }],
      ['an invented token', { 'x-device-token': randomBytes(48).toString('base64url') }],
      ['the credential as an X-Device-Id', { 'x-device-id': credential }],
      ['a changed signature', { 'x-device-token': withPart(credential, 2, `${signature.slice(0, -4)}AAAA`) }],
      [
        'changed claims (another subject)',
        {
          'x-device-token': withPart(
            credential,
            1,
            Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url'),
          ),
        },
      ],
      [
        'alg none',
        {
          'x-device-token': `${Buffer.from('{"alg":"none","typ":"device+jwt"}').toString('base64url')}.${payload}.`,
        },
      ],
      ['a changed header', { 'x-device-token': withPart(credential, 0, `${header}e30`) }],
    ];
    for (const [name, headers] of notExempt) {
      const answer = await login(ada, PASSWORD, headers);
      expect([name, answer.status, answer.body.code]).toEqual([name, 429, 'login_locked']);
    }

    // The genuine credential gets in from an IP never seen, and a wrong password with it is a plain
    // refusal (the password is checked), not the lock.
    expect((await login(ada, 'wrong-pass-1', { 'x-device-token': credential })).body.code).toBe('invalid_grant');
    const owner = await login(ada, PASSWORD, { 'x-device-token': credential });
    expect(owner.status).toBe(200);
    expect(owner.headers.get('x-device-token')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // Grace's own credential is still hers alone: her budget is untouched, and it does not open Ada's.
    expect((await login(grace, PASSWORD, { 'x-device-token': graceCredential })).status).toBe(200);
  });

  it('gives the login page an HttpOnly, Secure, SameSite=Lax device cookie that exempts that browser only', async () => {
    const joan = await activeUser('joan');
    const first = await signIn(joan);
    expect(first.status).toBe(303);
    const cookie = first.headers.getSetCookie().find((value) => value.startsWith('device_token='));
    expect(cookie).toBeDefined();
    const attributes = cookie!.split(';').map((part) => part.trim());
    expect(attributes).toEqual(
      expect.arrayContaining([
        'HttpOnly',
        'Secure',
        'SameSite=Lax',
        'Path=/v2/auth/authorize',
        `Max-Age=${DEVICE_COOKIE_MAX_AGE}`,
      ]),
    );
    const credential = attributes[0].slice('device_token='.length);
    const other = (await login(await activeUser('mary'), PASSWORD)).headers.get('x-device-token')!;
    await spendBudget(joan);

    for (const deviceCookie of [undefined, 'joan-laptop', other, withPart(credential, 2, 'AAAA')]) {
      const refused = await signIn(joan, deviceCookie);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    const again = await signIn(joan, credential);
    expect(again.status).toBe(303);
    expect(new URL(again.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    // The same credential works at the token endpoint too: it is the account's device, however it asks.
    expect((await login(joan, PASSWORD, { 'x-device-token': credential })).status).toBe(200);
  });
});
