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
    const org = stack.cli<Bootstrap>(
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
});
