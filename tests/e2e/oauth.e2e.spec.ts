import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

import { request, TestStack, totp, waitFor } from '@acct/testing';
import { Browser, BrowserContext, chromium } from 'playwright-core';
import { ResourceOwnerPassword } from 'simple-oauth2';

/** Debian's `chromium` package; `npm test` installs it when missing (tools/browser.mjs). */
const CHROMIUM = '/usr/bin/chromium';
/** The issuer every process is configured with; the stack itself listens on spare local ports. */
const ISSUER = 'https://accounts.oauth.test';
const APP = 'https://app.oauth.test/callback';
const LOOPBACK = 'http://127.0.0.1/callback';
/** RFC 8252 §7.3's IPv6 loopback, which a native app may register as well (contract §6). */
const LOOPBACK_V6 = 'http://[::1]/callback';
const ADMIN_PASSWORD = 'admin-password-1';
const MEMBER_PASSWORD = 'member-password-1';
/** Issue 12: a revocation is effective at every gateway within 1 s. */
const WITHIN_MS = 1000;
/** The login page's answer over the per-IP `auth` limit (zh-CN or English), as opposed to the lockout's. */
const PER_IP_LIMIT_PAGE = /Too many requests from your network|来自您所在网络的请求过多/;

interface Bootstrap {
  org_id: string;
  admin_user_id: string;
  client_id: string;
  client_secret: string | null;
}
interface Client {
  client_id: string;
  client_secret: string | null;
}
interface Tokens {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Issue 12: browser apps and standard OAuth clients, through two gateways of a two-instance stack.
 * `openid-client` (run in its own process: it is ESM only) discovers the server by RFC 8414 and runs
 * the authorization code flow with PKCE while headless Chromium fills the login page, TOTP step
 * included; `simple-oauth2` uses the password grant; and the attacks of the issue are tried over HTTP.
 */
describe('authorization code + PKCE, discovery and the login page (two gateways)', () => {
  let stack: TestStack;
  let gateways: string[];
  let org: Bootstrap;
  let adminToken: string;
  let spa: Client;
  let server: Client;
  let passwordClient: Client;
  let member: { email: string };
  let mfaMember: { email: string; secret: string };
  let browser: Browser;
  let ip = 0;
  /** Every request names its own client address, so the per-IP `auth` tier stays out of the way. */
  const nextIp = () => `198.51.100.${(ip = (ip % 250) + 1)}`;
  let sequence = 0;
  const email = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@oauth.test`;

  const gatewayUrl = (index: number, pathAndQuery: string) => `${gateways[index % gateways.length]}${pathAndQuery}`;
  const call = (index: number, pathAndQuery: string, init: Parameters<typeof request>[1] = {}) =>
    request(gatewayUrl(index, pathAndQuery), {
      ...init,
      headers: { 'x-forwarded-for': nextIp(), ...init.headers },
    });
  const raw = (url: string, init: RequestInit & { ip?: string } = {}) => {
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-for', init.ip ?? nextIp());
    return fetch(url, { redirect: 'manual', ...init, headers });
  };

  /** One step of openid-client in a child process (tests/e2e/support/openid-client.mjs). */
  async function openidClient<T>(step: Record<string, unknown>, gateway = 0): Promise<T> {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        path.join(__dirname, 'support/openid-client.mjs'),
        JSON.stringify({ issuer: ISSUER, gateway: gateways[gateway], ...step }),
      ],
      { cwd: path.resolve(__dirname, '../..') },
    );
    return JSON.parse(stdout) as T;
  }

  async function activeUser(): Promise<{ id: string; email: string }> {
    const created = await call(0, '/v2/users', {
      token: adminToken,
      body: { email: email('member'), display_name: 'Member', send_activation: false },
    });
    expect(created.status).toBe(201);
    const user = created.body as { id: string; email: string };
    const reset = await call(0, `/v2/users/${user.id}/reset-password`, {
      token: adminToken,
      body: { send_email: false },
    });
    const activated = await call(0, '/v2/users/me/password', {
      token: (reset.body as { token: string }).token,
      body: { password: MEMBER_PASSWORD },
    });
    expect(activated.status).toBe(200);
    return user;
  }

  async function passwordToken(username: string, password: string): Promise<string> {
    const issued = await call(0, '/v2/auth/token', { body: { grant_type: 'password', username, password } });
    expect(issued.status).toBe(200);
    return (issued.body as unknown as Tokens).access_token;
  }

  /** An authorization request's query for `client`. */
  function authorizeQuery(fields: Record<string, string> = {}, challenge = pkce().challenge): string {
    return new URLSearchParams({
      response_type: 'code',
      client_id: spa.client_id,
      redirect_uri: APP,
      scope: 'users:read',
      state: 'state-123',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...fields,
    }).toString();
  }

  /** The login page's hidden fields and the CSRF cookie a browser would keep. */
  async function loadLoginPage(query: string, gateway = 0) {
    const ipAddress = nextIp();
    const page = await raw(gatewayUrl(gateway, `/v2/auth/authorize?${query}`), { ip: ipAddress });
    expect(page.status).toBe(200);
    const html = await page.text();
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [
        match[1],
        match[2]
          .replace(/&amp;/g, '&')
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'"),
      ]),
    ) as Record<string, string>;
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
    return { html, fields, cookie };
  }

  /** Submits the login form as a browser would; the raw answer (a 303 on success). */
  function submit(form: Record<string, string>, cookie: string, gateway = 0, ipAddress = nextIp()) {
    return raw(gatewayUrl(gateway, '/v2/auth/authorize'), {
      method: 'POST',
      ip: ipAddress,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** A code for `member` through the SPA (the whole login over HTTP), and its verifier. */
  async function codeOverHttp(redirectUri = APP) {
    const { verifier, challenge } = pkce();
    const { fields, cookie } = await loadLoginPage(authorizeQuery({ redirect_uri: redirectUri }, challenge));
    const answer = await submit({ ...fields, username: member.email, password: MEMBER_PASSWORD }, cookie);
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    return { code: location.searchParams.get('code')!, verifier, location };
  }

  const exchange = (fields: Record<string, string>, gateway = 1) =>
    call(gateway, '/v2/auth/token', {
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: spa.client_id, ...fields }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      instances: 2,
      env: { TRUSTED_PROXIES: '127.0.0.1', TOKEN_ISSUER: ISSUER },
    });
    gateways = stack.gatewayUrls();
    expect(gateways).toHaveLength(2);
    org = stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      'oauth',
      '--email',
      'admin@oauth.test',
      '--password',
      ADMIN_PASSWORD,
    );
    adminToken = await passwordToken('admin@oauth.test', ADMIN_PASSWORD);
    spa = stack.cli<Client>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Browser app', '--type', 'public'],
      ...['--grant-types', 'authorization_code,refresh_token', '--redirect-uris', `${APP},${LOOPBACK},${LOOPBACK_V6}`],
      ...['--scopes', 'users:read system:read'],
    );
    server = stack.cli<Client>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Server app', '--type', 'confidential'],
      ...['--grant-types', 'authorization_code', '--redirect-uris', APP, '--scopes', 'users:read'],
    );
    passwordClient = stack.cli<Client>(
      ...['create-client', '--org-id', org.org_id, '--name', 'CLI tool'],
      ...['--grant-types', 'password,refresh_token', '--scopes', 'users:read system:read'],
    );
    member = await activeUser();
    const mfaUser = await activeUser();
    const mfaToken = await passwordToken(mfaUser.email, MEMBER_PASSWORD);
    const enrolled = await call(0, '/v2/users/me/mfa/totp', {
      token: mfaToken,
      body: { password: MEMBER_PASSWORD },
    });
    const { secret } = enrolled.body as { secret: string };
    // The previous step's code (accepted: ±1 step), so the current one is still unused for the login.
    const confirmed = await call(0, '/v2/users/me/mfa/totp/confirm', {
      token: mfaToken,
      body: { code: totp(secret, Date.now() - 30_000) },
    });
    expect(confirmed.status).toBe(200);
    mfaMember = { email: mfaUser.email, secret };
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  describe('discovery (RFC 8414)', () => {
    it('lists every endpoint and method the server supports, without a token, cacheable', async () => {
      const response = await raw(gatewayUrl(0, '/.well-known/oauth-authorization-server'));
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
      const etag = response.headers.get('etag');
      expect(etag).toMatch(/^"[\w-]+"$/);
      // Field by field in e2e/oauth.acceptance.spec.ts; here: the configured issuer, and both gateways agree.
      const metadata = (await response.json()) as Record<string, unknown>;
      expect(metadata).toMatchObject({ issuer: ISSUER, authorization_endpoint: `${ISSUER}/v2/auth/authorize` });
      const again = await raw(gatewayUrl(1, '/.well-known/oauth-authorization-server'), {
        headers: { 'if-none-match': etag! },
      });
      expect(again.status).toBe(304);
      // RFC 9110 §13.1.2: `*` matches any current representation.
      const any = await raw(gatewayUrl(1, '/.well-known/oauth-authorization-server'), {
        headers: { 'if-none-match': '*' },
      });
      expect(any.status).toBe(304);
    });
  });

  describe('openid-client and Chromium', () => {
    let context: BrowserContext;

    beforeEach(async () => {
      context = await browser.newContext({ locale: 'en-US', extraHTTPHeaders: { 'x-forwarded-for': nextIp() } });
    });

    afterEach(async () => {
      await context.close();
    });

    it('signs in with e-mail, password and TOTP, exchanges the code, refreshes with rotation and revokes', async () => {
      const started = await openidClient<{ authorizationUrl: string; verifier: string; state: string }>({
        op: 'start',
        clientId: spa.client_id,
        redirectUri: APP,
        scope: 'users:read system:read',
      });
      expect(started.authorizationUrl.startsWith(`${ISSUER}/v2/auth/authorize?`)).toBe(true);

      // The app's callback: the browser ends here; the test reads where it was sent.
      let callback: string | undefined;
      await context.route(`${APP}**`, (route) => {
        callback = route.request().url();
        return route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
      });
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') violations.push(message.text());
      });
      const loaded = await page.goto(started.authorizationUrl.replace(ISSUER, gateways[0]));
      expect(loaded?.status()).toBe(200);
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      expect(await page.textContent('h1')).toBe('Sign in');
      await page.getByLabel('E-mail or phone').fill(mfaMember.email);
      await page.getByLabel('Password').fill(MEMBER_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Verification code').waitFor();
      expect(await page.textContent('h1')).toBe('Two-step verification');
      expect(await page.content()).not.toContain(MEMBER_PASSWORD);
      await page.getByLabel('Verification code').fill(totp(mfaMember.secret));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${APP}**`);
      expect(violations).toEqual([]);

      const returned = new URL(callback!);
      expect(returned.searchParams.get('state')).toBe(started.state);
      expect(returned.searchParams.get('iss')).toBe(ISSUER);
      expect(returned.searchParams.get('code')).toMatch(/^[\w-]{43}$/);

      const tokens = await openidClient<Tokens>(
        {
          op: 'exchange',
          clientId: spa.client_id,
          callbackUrl: callback,
          verifier: started.verifier,
          state: started.state,
        },
        1,
      );
      expect(tokens).toMatchObject({
        token_type: expect.stringMatching(/^bearer$/i),
        expires_in: 7200,
        scope: 'system:read users:read',
      });
      const me = await call(0, '/v2/users/me', { token: tokens.access_token });
      expect(me.status).toBe(200);
      expect((me.body as { email: string }).email).toBe(mfaMember.email);

      const refreshed = await openidClient<Tokens>(
        { op: 'refresh', clientId: spa.client_id, refreshToken: tokens.refresh_token },
        0,
      );
      expect(refreshed.refresh_token).toMatch(/^[\w-]{43}$/);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect((await call(1, '/v2/users/me', { token: refreshed.access_token })).status).toBe(200);

      // Introspection (a confidential client) sees the token; revoking the refresh token (the public
      // client names itself) takes its family and the access tokens issued from it.
      const introspect = (token: string, gateway: number) =>
        openidClient<Record<string, unknown>>(
          { op: 'introspect', clientId: server.client_id, clientSecret: server.client_secret, token },
          gateway,
        );
      expect(await introspect(refreshed.access_token, 0)).toMatchObject({
        active: true,
        client_id: spa.client_id,
        token_type: 'Bearer',
        iss: ISSUER,
      });
      await openidClient(
        { op: 'revoke', clientId: spa.client_id, token: refreshed.refresh_token, hint: 'refresh_token' },
        1,
      );
      await Promise.all(
        [0, 1].map((gateway) =>
          waitFor(
            `401 at gateway ${gateway}`,
            async () =>
              (await call(gateway, '/v2/users/me', { token: refreshed.access_token })).status === 401
                ? true
                : undefined,
            { timeoutMs: WITHIN_MS, intervalMs: 25 },
          ),
        ),
      );
      for (const gateway of [0, 1])
        expect(await introspect(refreshed.access_token, gateway)).toEqual({ active: false });
      expect(await introspect(refreshed.refresh_token!, 0)).toEqual({ active: false });
      const again = await call(0, '/v2/auth/token', {
        body: { grant_type: 'refresh_token', client_id: spa.client_id, refresh_token: refreshed.refresh_token },
      });
      expect(again.status).toBe(400);
    }, 60_000);

    it('signs in a native app whose redirect URI is the IPv6 loopback: the CSP lets the 303 back to it through', async () => {
      // The app's own loopback listener on [::1] (RFC 8252 §7.3: any port).
      const callbacks: string[] = [];
      const app = createServer((request, response) => {
        if (request.url?.startsWith('/callback')) callbacks.push(request.url);
        response.end('signed in');
      });
      await new Promise<void>((resolve) => app.listen(0, '::1', resolve));
      const redirectUri = `http://[::1]:${(app.address() as AddressInfo).port}/callback`;
      try {
        const page = await context.newPage();
        const violations: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') violations.push(message.text());
        });
        const loaded = await page.goto(
          gatewayUrl(0, `/v2/auth/authorize?${authorizeQuery({ redirect_uri: redirectUri })}`),
        );
        expect(loaded?.status()).toBe(200);
        await page.getByLabel('E-mail or phone').fill(member.email);
        await page.getByLabel('Password').fill(MEMBER_PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${redirectUri}**`, { timeout: 10_000 }).catch(() => undefined);
        expect(violations).toEqual([]);
        expect(callbacks).toHaveLength(1);
        const returned = new URL(callbacks[0], redirectUri);
        expect(returned.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
        expect(returned.searchParams.get('state')).toBe('state-123');
      } finally {
        await new Promise((resolve) => app.close(resolve));
      }
    });

    // Two tabs of an app whose session ended both send the person to the login page, by a link (or a
    // script) of the app: a cross-site navigation. The second page load must not spoil the first form.
    it('signs in from the first of two login pages an app opened in two tabs', async () => {
      const states = ['tab-1', 'tab-2'];
      await context.route('https://app.oauth.test/start/**', (route) => {
        const state = new URL(route.request().url()).pathname.split('/').pop()!;
        const href = gatewayUrl(0, `/v2/auth/authorize?${authorizeQuery({ state })}`).replace(/&/g, '&amp;');
        return route.fulfill({
          status: 200,
          contentType: 'text/html',
          body: `<a id="sign-in" href="${href}">Sign in</a>`,
        });
      });
      const tabs = [];
      for (const state of states) {
        const tab = await context.newPage();
        await tab.goto(`https://app.oauth.test/start/${state}`);
        await Promise.all([tab.waitForURL(/\/v2\/auth\/authorize\?/), tab.click('#sign-in')]);
        expect(await tab.textContent('h1')).toBe('Sign in');
        tabs.push(tab);
      }
      const [first] = tabs;
      await first.getByLabel('E-mail or phone').fill(member.email);
      await first.getByLabel('Password').fill(MEMBER_PASSWORD);
      const [answer] = await Promise.all([
        first.waitForResponse((response) => response.request().method() === 'POST'),
        first.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      expect(answer.status()).toBe(303);
      const location = new URL(answer.headers().location);
      expect(location.searchParams.get('state')).toBe('tab-1');
      expect(location.searchParams.get('code')).toMatch(/^[\w-]{43}$/);
    });

    // Contract §1: a client may send its own X-Request-Id and gets it back (and the answer exposes it).
    // From a browser app that header makes the call a preflighted one, which must allow it.
    it('lets a browser app send its own X-Request-Id to the token endpoint, and read it back', async () => {
      const app = createServer((_request, response) => response.end('<p>app</p>'));
      await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
      // A context of its own: the others' X-Forwarded-For would make every fetch a preflighted one.
      const plain = await browser.newContext();
      try {
        const page = await plain.newPage();
        await page.goto(`http://127.0.0.1:${(app.address() as AddressInfo).port}/`);
        const answer = await page.evaluate(
          async (url) => {
            try {
              const response = await fetch(url, {
                method: 'POST',
                headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'spa-request-1' },
                body: 'grant_type=refresh_token',
              });
              return { status: response.status, requestId: response.headers.get('x-request-id') };
            } catch (error) {
              return { error: String(error) };
            }
          },
          gatewayUrl(0, '/v2/auth/token'),
        );
        expect(answer).toEqual({ status: 400, requestId: 'spa-request-1' });
      } finally {
        await plain.close();
        await new Promise((resolve) => app.close(resolve));
      }
    });

    it('serves the login page in Simplified Chinese by default, with a strict CSP and no external assets', async () => {
      const zh = await browser.newContext({ extraHTTPHeaders: { 'x-forwarded-for': nextIp(), 'accept-language': '' } });
      const page = await zh.newPage();
      const requests: string[] = [];
      page.on('request', (sent) => requests.push(sent.url()));
      const response = await page.goto(gatewayUrl(1, `/v2/auth/authorize?${authorizeQuery()}`));
      expect(response?.status()).toBe(200);
      expect(await page.getAttribute('html', 'lang')).toBe('zh-CN');
      expect(await page.textContent('h1')).toBe('登录');
      expect(requests).toHaveLength(1);
      const csp = response!.headers()['content-security-policy'];
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("form-action 'self' https://app.oauth.test");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      await zh.close();
    });
  });

  describe('the password grant with simple-oauth2', () => {
    it('gets and refreshes tokens as a confidential client registered for password', async () => {
      const oauth = new ResourceOwnerPassword({
        client: { id: passwordClient.client_id, secret: passwordClient.client_secret! },
        auth: { tokenHost: gateways[1], tokenPath: '/v2/auth/token' },
        http: { headers: { 'x-forwarded-for': nextIp() } },
      });
      const accessToken = await oauth.getToken({
        username: member.email,
        password: MEMBER_PASSWORD,
        scope: 'users:read',
      });
      expect(accessToken.token).toMatchObject({ token_type: 'Bearer', scope: 'users:read', expires_in: 7200 });
      expect((await call(0, '/v2/users/me', { token: accessToken.token.access_token as string })).status).toBe(200);
      const refreshed = await accessToken.refresh();
      expect(refreshed.token.refresh_token).not.toBe(accessToken.token.refresh_token);
    });

    it('is refused to the org bootstrap client, which is not registered for it: 400 unauthorized_client', async () => {
      const oauth = new ResourceOwnerPassword({
        client: { id: org.client_id, secret: org.client_secret! },
        auth: { tokenHost: gateways[0], tokenPath: '/v2/auth/token' },
        http: { headers: { 'x-forwarded-for': nextIp() } },
      });
      const error = (await oauth
        .getToken({ username: member.email, password: MEMBER_PASSWORD })
        .catch((refusal: unknown) => refusal)) as { output?: { statusCode: number }; data?: { payload: unknown } };
      expect(error.output?.statusCode).toBe(400);
      expect(error.data?.payload).toMatchObject({
        code: 'unauthorized_client',
        error: 'unauthorized_client',
      });
    });

    // Contract §6: a client asking for a grant it is not registered for. A public client names itself
    // by its id alone (`none`), and can never be registered for client_credentials.
    it('refuses client_credentials to a public client, by id or by Basic without secret: 400 unauthorized_client', async () => {
      for (const init of [
        { body: { grant_type: 'client_credentials', client_id: spa.client_id } },
        {
          body: { grant_type: 'client_credentials' },
          headers: { authorization: `Basic ${Buffer.from(`${spa.client_id}:`).toString('base64')}` },
        },
      ]) {
        const refused = await call(0, '/v2/auth/token', init);
        expect([refused.status, refused.body]).toEqual([
          400,
          expect.objectContaining({ code: 'unauthorized_client', error: 'unauthorized_client' }),
        ]);
      }
    });
  });

  describe('revocation and introspection (RFC 7009, RFC 7662)', () => {
    // What a resource server is handed and passes on: a token of another issuer, or garbage, of any length.
    const foreign = `${Buffer.from('{"alg":"RS256","typ":"JWT"}').toString('base64url')}.${'e'.repeat(1500)}.${'s'.repeat(342)}`;

    it('revokes a token it did not issue, of any length, with 200, once the client is authenticated', async () => {
      const revoked = await call(0, '/v2/auth/revoke', { body: { token: foreign, client_id: spa.client_id } });
      expect(revoked.status).toBe(200);
      const anonymous = await call(0, '/v2/auth/revoke', { body: { token: foreign } });
      expect([anonymous.status, anonymous.body]).toEqual([401, expect.objectContaining({ error: 'invalid_client' })]);
    });

    it('introspects a token it did not issue, of any length, as exactly {"active": false}', async () => {
      const basic = `Basic ${Buffer.from(`${server.client_id}:${server.client_secret}`).toString('base64')}`;
      const introspected = await call(1, '/v2/auth/introspect', {
        body: new URLSearchParams({ token: foreign, token_type_hint: 'access_token' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      });
      expect([introspected.status, introspected.body]).toEqual([200, { active: false }]);
    });
  });

  describe('attacks', () => {
    it.each([
      ['an unknown client', { client_id: 'no-such-client' }],
      ['another port on a non-loopback host', { redirect_uri: 'https://app.oauth.test:8443/callback' }],
      ['another path', { redirect_uri: 'https://app.oauth.test/callback/x' }],
      ['an added query', { redirect_uri: 'https://app.oauth.test/callback?next=1' }],
      ['a fragment', { redirect_uri: 'https://app.oauth.test/callback#x' }],
      ['userinfo', { redirect_uri: 'https://evil@app.oauth.test/callback' }],
      ['an upper-case host', { redirect_uri: 'https://APP.oauth.test/callback' }],
      ['a look-alike host', { redirect_uri: 'https://app.oauth.test.evil.example/callback' }],
    ])('answers %s with a 400 error page, never a redirect', async (_what, fields) => {
      const response = await raw(gatewayUrl(0, `/v2/auth/authorize?${authorizeQuery(fields)}`));
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await response.text()).toContain('<h1>');
    });

    // Such a URI cannot go back in a Location header: every sign-in and error redirect answered 500.
    it('refuses to register a redirect URI that is no RFC 3986 URI (non-ASCII), so no sign-in ends in a 500', () => {
      const register = (redirectUri: string) =>
        stack.cli<Client>(
          ...['create-client', '--org-id', org.org_id, '--name', 'IRI app', '--type', 'public'],
          ...['--grant-types', 'authorization_code', '--redirect-uris', redirectUri, '--scopes', 'users:read'],
        );
      expect(() => register('https://app.oauth.test/回调')).toThrow(/invalid fields/);
      expect(register('https://app.oauth.test/%E5%9B%9E%E8%B0%83').client_id).toEqual(expect.any(String));
    });

    it('accepts a registered loopback redirect URI on any port', async () => {
      const response = await raw(
        gatewayUrl(0, `/v2/auth/authorize?${authorizeQuery({ redirect_uri: 'http://127.0.0.1:49152/callback' })}`),
      );
      expect(response.status).toBe(200);
    });

    it.each([
      ['a plain challenge', { code_challenge_method: 'plain' }],
      ['a missing challenge', { code_challenge: '', code_challenge_method: '' }],
    ])('sends %s back to the client: invalid_request with state and iss', async (_what, fields) => {
      const query = new URLSearchParams(authorizeQuery(fields));
      for (const [name, value] of [...query]) if (value === '') query.delete(name);
      const response = await raw(gatewayUrl(1, `/v2/auth/authorize?${query.toString()}`));
      expect(response.status).toBe(303);
      const location = new URL(response.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(APP);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: expect.any(String),
        state: 'state-123',
        iss: ISSUER,
      });
    });

    // Strict OAuth libraries refuse an error response whose description breaks this rule.
    it('keeps error_description to the characters RFC 6749 §4.1.2.1 and §5.2 allow, whatever the client sent', async () => {
      const DESCRIPTION = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;
      const grant = await call(0, '/v2/auth/token', { body: { grant_type: 'foo' } });
      expect(grant.status).toBe(400);
      expect(grant.body).toMatchObject({
        error: 'unsupported_grant_type',
        error_description: expect.stringMatching(DESCRIPTION),
      });
      const redirected = await raw(gatewayUrl(0, `/v2/auth/authorize?${authorizeQuery({ scope: 'a"b\\ü' })}`));
      expect(redirected.status).toBe(303);
      const location = new URL(redirected.headers.get('location')!);
      expect(location.searchParams.get('error')).toBe('invalid_scope');
      expect(location.searchParams.get('error_description')).toMatch(DESCRIPTION);
    });

    it('refuses a wrong verifier, and the code is used up', async () => {
      const { code, verifier } = await codeOverHttp();
      const wrong = await exchange({ code, redirect_uri: APP, code_verifier: pkce().verifier });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatchObject({ code: 'invalid_grant', error: 'invalid_grant' });
      expect((await exchange({ code, redirect_uri: APP, code_verifier: verifier })).status).toBe(400);
    });

    it('refuses a code used again and revokes the tokens its first use issued, at both gateways within 1 s', async () => {
      const { code, verifier } = await codeOverHttp();
      const first = await exchange({ code, redirect_uri: APP, code_verifier: verifier }, 0);
      expect(first.status).toBe(200);
      const replay = await exchange({ code, redirect_uri: APP, code_verifier: verifier }, 1);
      expect(replay.status).toBe(400);
      expect(replay.body).toMatchObject({ code: 'invalid_grant' });
      const refresh = await call(0, '/v2/auth/token', {
        body: {
          grant_type: 'refresh_token',
          client_id: spa.client_id,
          refresh_token: (first.body as unknown as Tokens).refresh_token,
        },
      });
      expect(refresh.status).toBe(400);
      expect(refresh.body).toMatchObject({ code: 'invalid_grant' });
      const access = (first.body as unknown as Tokens).access_token;
      await Promise.all(
        [0, 1].map((gateway) =>
          waitFor(
            `401 at gateway ${gateway}`,
            async () => ((await call(gateway, '/v2/users/me', { token: access })).status === 401 ? true : undefined),
            { timeoutMs: WITHIN_MS, intervalMs: 25 },
          ),
        ),
      );
    });

    // Contract §7: a disabled user's access tokens are revoked within 1 s. A code exchanged by a client
    // not registered for refresh_token starts no refresh family in the database, so only the subject
    // entry (whole seconds of `iat`, strictly before the disable's second) could end its access token.
    it('ends the access token of a code exchange without refresh token issued in the second the user is disabled', async () => {
      const basic = `Basic ${Buffer.from(`${server.client_id}:${server.client_secret}`).toString('base64')}`;
      let outcome: { token: string; sameSecond: boolean } | undefined;
      for (let attempt = 0; attempt < 5 && !outcome?.sameSecond; attempt += 1) {
        const user = await activeUser();
        const { verifier, challenge } = pkce();
        const { fields, cookie } = await loadLoginPage(
          authorizeQuery({ client_id: server.client_id, scope: 'users:read' }, challenge),
        );
        const signedIn = await submit({ ...fields, username: user.email, password: MEMBER_PASSWORD }, cookie);
        expect(signedIn.status).toBe(303);
        const code = new URL(signedIn.headers.get('location')!).searchParams.get('code')!;
        // Start at the beginning of a second, so that the exchange and the disable share it.
        await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
        const exchanged = await call(0, '/v2/auth/token', {
          body: { grant_type: 'authorization_code', code, redirect_uri: APP, code_verifier: verifier },
          headers: { authorization: basic },
        });
        expect(exchanged.status).toBe(200);
        const tokens = exchanged.body as unknown as Tokens;
        expect(tokens.refresh_token).toBeUndefined();
        const disabled = await call(1, `/v2/users/${user.id}/disable`, { method: 'POST', token: adminToken });
        expect(disabled.status).toBe(200);
        const disabledBy = Math.floor(Date.now() / 1000);
        const { iat } = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString()) as {
          iat: number;
        };
        outcome = { token: tokens.access_token, sameSecond: iat === disabledBy };
      }
      expect(outcome?.sameSecond).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, WITHIN_MS));
      for (const gateway of [0, 1]) {
        expect({ gateway, status: (await call(gateway, '/v2/users/me', { token: outcome!.token })).status }).toEqual({
          gateway,
          status: 401,
        });
      }
    });

    it("refuses another client's code, even with that client's own valid authentication", async () => {
      const { code, verifier } = await codeOverHttp();
      const stolen = await call(1, '/v2/auth/token', {
        body: { grant_type: 'authorization_code', code, redirect_uri: APP, code_verifier: verifier },
        headers: {
          authorization: `Basic ${Buffer.from(`${server.client_id}:${server.client_secret}`).toString('base64')}`,
        },
      });
      expect(stolen.status).toBe(400);
      expect(stolen.body).toMatchObject({ code: 'invalid_grant' });
    });

    it("refuses the login form without a CSRF token and with another session's token", async () => {
      const query = authorizeQuery();
      const mine = await loadLoginPage(query, 0);
      const theirs = await loadLoginPage(query, 1);
      expect(mine.cookie).toMatch(/^oauth_csrf=[\w-]{43}$/);
      const login = { username: member.email, password: MEMBER_PASSWORD };
      const { csrf_token: _token, ...withoutToken } = mine.fields;
      for (const [form, cookie] of [
        [{ ...withoutToken, ...login }, mine.cookie],
        [{ ...mine.fields, ...login, csrf_token: theirs.fields.csrf_token }, mine.cookie],
        [{ ...mine.fields, ...login }, ''],
      ] as const) {
        const response = await submit(form, cookie);
        expect(response.status).toBe(403);
        expect(response.headers.get('location')).toBeNull();
      }
      expect((await submit({ ...mine.fields, ...login }, mine.cookie)).status).toBe(303);
    });

    // Auth refuses them as the token endpoint does (audited, never counted toward a lockout:
    // apps/auth/src/authorization/authorization.integration.spec.ts); the person sees why.
    it('answers a control character typed into the login or code form with the page again (400, HTML) saying so', async () => {
      const { fields, cookie } = await loadLoginPage(authorizeQuery());
      const expectPageAgain = async (response: Response, field: string) => {
        expect({ field, status: response.status, type: response.headers.get('content-type') }).toEqual({
          field,
          status: 400,
          type: 'text/html; charset=utf-8',
        });
        const html = await response.text();
        expect(html).toContain('控制字符');
        expect(html).toContain('role="alert"');
        return html;
      };
      for (const [field, typed] of [
        ['username', { username: `${member.email}\u0000`, password: MEMBER_PASSWORD }],
        ['username', { username: `\u0085${member.email}`, password: 'wrong-password-1' }],
        ['password', { username: member.email, password: `${MEMBER_PASSWORD}\u0007` }],
        ['password', { username: member.email, password: `\u001b${MEMBER_PASSWORD}` }],
        ['password', { username: member.email, password: `wrong\u007f` }],
        ['password', { username: member.email, password: `wrong\r\n` }],
      ] as const) {
        const html = await expectPageAgain(await submit({ ...fields, ...typed }, cookie), field);
        // The form again, the e-mail kept (without the control character).
        expect(html).toContain(`name="username" type="text" autocomplete="username" required value="${member.email}"`);
      }
      // The same form, typed right, signs in.
      const signedIn = await submit({ ...fields, username: member.email, password: MEMBER_PASSWORD }, cookie, 1);
      expect(signedIn.status).toBe(303);

      // The code step: the MFA page again, with the same error.
      const mfa = await loadLoginPage(authorizeQuery());
      const step = await submit({ ...mfa.fields, username: mfaMember.email, password: MEMBER_PASSWORD }, mfa.cookie);
      expect(step.status).toBe(200);
      const ticket = /name="mfa_ticket" value="([^"]+)"/.exec(await step.text())![1];
      const html = await expectPageAgain(
        await submit({ ...mfa.fields, mfa_ticket: ticket, mfa_code: '123\n456' }, mfa.cookie),
        'mfa_code',
      );
      expect(html).toContain('name="mfa_code"');
    });

    it('shares the lockout between the login page and the token endpoint', async () => {
      const address = nextIp();
      const { fields, cookie } = await loadLoginPage(authorizeQuery(), 0);
      /** Waits out the per-IP `auth` tier (it admits 3 at once, then one every 6 s) rather than the lockout. */
      const unthrottled = async (attempt: () => Promise<Response>): Promise<Response> => {
        for (;;) {
          const response = await attempt();
          if (response.status !== 429) return response;
          const text = await response.clone().text();
          // The token endpoint's per-IP refusal is a problem (`rate_limited`), the login page's a page saying so.
          const html = response.headers.get('content-type')?.startsWith('text/html');
          const perIp = html
            ? PER_IP_LIMIT_PAGE.test(text)
            : (JSON.parse(text) as { code: string }).code === 'rate_limited';
          if (!perIp) return response;
          await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after')) * 1000));
        }
      };
      const viaPage = () =>
        unthrottled(() => submit({ ...fields, username: member.email, password: 'wrong-1' }, cookie, 0, address));
      const viaToken = () =>
        unthrottled(() =>
          raw(gatewayUrl(1, '/v2/auth/token'), {
            method: 'POST',
            ip: address,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ grant_type: 'password', username: member.email, password: 'wrong-1' }),
          }),
        );
      for (const attempt of [viaPage, viaToken, viaPage, viaToken, viaPage]) expect((await attempt()).status).toBe(400);
      const lockedPage = await unthrottled(() =>
        submit({ ...fields, username: member.email, password: MEMBER_PASSWORD }, cookie, 0, address),
      );
      expect(lockedPage.status).toBe(429);
      expect(Number(lockedPage.headers.get('retry-after'))).toBeGreaterThan(60);
      const lockedToken = await viaToken();
      expect(lockedToken.status).toBe(429);
    }, 90_000);
  });
});
