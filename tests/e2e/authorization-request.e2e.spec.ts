import { createHash, randomBytes } from 'node:crypto';

import { Bootstrap, TestStack } from '@acct/testing';

const ISSUER = 'https://accounts.authorization-request.test';
const APP = 'https://app.authorization-request.test/callback';
const ADMIN_PASSWORD = 'authorization-request-admin-1';

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Contract §6 and RFC 6749 §4.1.2.1: an authorization request that cannot be trusted (unknown client,
 * unregistered redirect URI) gets the HTML error page, never a redirect; any other bad request goes
 * back to the client with `error`, `error_description`, `state` and `iss`. The person's browser never
 * lands on a JSON problem, whatever the request holds.
 */
describe('the authorization endpoint answers every bad request with its error page or a redirect', () => {
  let stack: TestStack;
  let org: Bootstrap;
  let spa: string;
  let ip = 0;
  const nextIp = () => `198.51.100.${(ip = (ip % 250) + 1)}`;
  const raw = (path: string) =>
    fetch(stack.url(path), { redirect: 'manual', headers: { 'x-forwarded-for': nextIp() } });

  const authorizeQuery = (fields: Record<string, string>) =>
    new URLSearchParams({
      response_type: 'code',
      client_id: spa,
      redirect_uri: APP,
      scope: 'users:read',
      state: 'state-123',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      ...fields,
    }).toString();

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1', TOKEN_ISSUER: ISSUER },
    });
    org = stack.cli<Bootstrap>(
      ...['bootstrap', '--org', 'authorization-request', '--email', 'admin@authorization-request.test'],
      ...['--password', ADMIN_PASSWORD],
    );
    spa = stack.cli<{ client_id: string }>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Browser app', '--type', 'public'],
      ...['--grant-types', 'authorization_code,refresh_token', '--redirect-uris', APP],
      ...['--scopes', 'users:read system:read'],
    ).client_id;
  });

  afterAll(async () => {
    await stack?.close();
  });

  it.each([
    ['the scope', { scope: 'users:read\tsystem:read' }],
    ['the code challenge', { code_challenge: `${pkce().challenge.slice(1)}\u0000` }],
    ['the code challenge method', { code_challenge_method: 'S256\n' }],
    ['the response type', { response_type: 'code\u007f' }],
  ])(
    'sends a control character in %s back to the client: invalid_request with state and iss',
    async (_what, fields) => {
      const response = await raw(`/v2/auth/authorize?${authorizeQuery(fields)}`);
      expect(response.status).toBe(303);
      const location = new URL(response.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(APP);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'invalid_request',
        error_description: expect.any(String),
        state: 'state-123',
        iss: ISSUER,
      });
    },
  );

  it('ignores a parameter it does not know, however long and however often sent (RFC 6749 §3.1)', async () => {
    const unknown = new URLSearchParams([
      ['login_hint', 'x'.repeat(2000)],
      ['utm_source', 'a'],
      ['utm_source', 'b'],
    ]);
    const response = await raw(`/v2/auth/authorize?${authorizeQuery({})}&${unknown.toString()}`);
    expect(response.headers.get('location')).toBeNull();
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('name="password"');
  });

  it('answers a person over the per-IP limit with a page saying how long to wait, the form kept, not a JSON problem', async () => {
    const ip = '203.0.113.77';
    const headers = { 'x-forwarded-for': ip, 'accept-language': 'en' };
    const query = authorizeQuery({});
    const first = await fetch(stack.url(`/v2/auth/authorize?${query}`), { redirect: 'manual', headers });
    expect(first.status).toBe(200);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0];
    const fields = Object.fromEntries(
      [...(await first.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [
        match[1],
        match[2].replace(/&amp;/g, '&'),
      ]),
    );
    // The `auth` group's bucket holds a few requests per IP: a page loaded again and again empties it.
    let page = await fetch(stack.url(`/v2/auth/authorize?${query}`), { redirect: 'manual', headers });
    for (let attempt = 0; attempt < 30 && page.status !== 429; attempt += 1) {
      await page.arrayBuffer();
      page = await fetch(stack.url(`/v2/auth/authorize?${query}`), { redirect: 'manual', headers });
    }
    const expectWaitPage = async (response: Response) => {
      expect(response.status).toBe(429);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
      const html = await response.text();
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).toMatch(/Too many requests from your network\. Try again in \d+ seconds\./);
      return html;
    };
    await expectWaitPage(page);
    // The sign-in form posted meanwhile: the form again (nothing typed is lost), with the same words.
    const username = 'admin@authorization-request.test';
    const signIn = () =>
      fetch(stack.url('/v2/auth/authorize'), {
        method: 'POST',
        redirect: 'manual',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ ...fields, username, password: 'not-the-password-1' }).toString(),
      });
    const posted = await signIn();
    const retryAfter = Number(posted.headers.get('retry-after'));
    const form = await expectWaitPage(posted);
    expect(form).toContain(`name="csrf_token" value="${fields.csrf_token}"`);
    expect(form).toContain(`value="${username}"`);

    // The refused attempt never reached auth: once the bucket has a token again, the next one is the
    // only failure the login audit records (and the only one the lockout counts).
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    expect((await signIn()).status).toBe(400);
    const token = await fetch(stack.url('/v2/auth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.78' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: org.client_id,
        client_secret: org.client_secret,
      }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const audit = await fetch(stack.url(`/v2/audit/logins?user_id=${org.admin_user_id}&outcome=failure`), {
      headers: { authorization: `Bearer ${access_token}`, 'x-forwarded-for': '203.0.113.78' },
    });
    expect(audit.status).toBe(200);
    const { items } = (await audit.json()) as { items: Array<{ grant_type: string }> };
    expect(items).toHaveLength(1);
  });

  it.each([
    ['the client id', { client_id: 'no-such-client\u0000' }],
    ['the redirect URI', { redirect_uri: `${APP}\r\nSet-Cookie: x=1` }],
    ['the state', { state: 'state\u0007123' }],
  ])('answers a control character in %s with the 400 error page, never a redirect', async (_what, fields) => {
    const response = await raw(`/v2/auth/authorize?${authorizeQuery(fields)}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toContain('<h1>');
  });
  // Last: auth stays stopped for the rest of the suite.
  it('answers the page while auth is unavailable with a page saying so, with Retry-After, not a JSON problem', async () => {
    await stack.stopApp('auth');
    const response = await fetch(stack.url(`/v2/auth/authorize?${authorizeQuery({})}`), {
      redirect: 'manual',
      headers: { 'x-forwarded-for': nextIp(), 'accept-language': 'en' },
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('The service is unavailable. Try again in a moment.');
  });
});
