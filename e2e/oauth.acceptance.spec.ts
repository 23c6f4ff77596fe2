import { createHash, randomBytes } from 'node:crypto';

import { call, cli, expectProblem, freshIp, gateway, jwtPart, newOrg, TokenSet } from './support/client';

interface Client {
  client_id: string;
  client_secret: string | null;
}
interface Metadata {
  issuer: string;
  [member: string]: unknown;
}

const REDIRECT = 'https://app.acceptance.test/callback';

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A request as a browser sends it: redirects are answers, not followed. */
const browser = (path: string, init: RequestInit = {}, ip = freshIp()) => {
  const headers = new Headers(init.headers);
  headers.set('x-forwarded-for', ip);
  return fetch(gateway(path), { redirect: 'manual', ...init, headers });
};

/** Contract §6 from outside: discovery, the authorization endpoint and its page, the authorization_code grant, revocation, introspection. */
describe('browser apps and standard OAuth clients (contract §6)', () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  let spa: Client;
  let metadata: Metadata;

  const query = (fields: Record<string, string> = {}, challenge = pkce().challenge) =>
    new URLSearchParams({
      response_type: 'code',
      client_id: spa.client_id,
      redirect_uri: REDIRECT,
      scope: 'users:read',
      state: 'st4te',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...fields,
    }).toString();

  /** Signs the org's admin in on the login page; the code and verifier. */
  async function signIn() {
    const { verifier, challenge } = pkce();
    const ip = freshIp();
    const page = await browser(`/v2/auth/authorize?${query({}, challenge)}`, {}, ip);
    expect(page.status).toBe(200);
    const html = await page.text();
    const form = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1], match[2]]),
    );
    const answer = await browser(
      '/v2/auth/authorize',
      {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: (page.headers.get('set-cookie') ?? '').split(';')[0],
        },
        body: new URLSearchParams({ ...form, username: org.adminEmail, password: org.adminPassword }).toString(),
      },
      ip,
    );
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    return { location, code: location.searchParams.get('code')!, verifier };
  }

  /** POST /v2/auth/token with grant_type=authorization_code for the public client (form-encoded). */
  const exchange = (code: string, verifier: string) =>
    call<TokenSet>('/v2/auth/token', {
      form: {
        grant_type: 'authorization_code',
        client_id: spa.client_id,
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      },
    });

  beforeAll(async () => {
    org = await newOrg('oauth');
    spa = cli<Client>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Acceptance SPA', '--type', 'public'],
      ...['--grant-types', 'authorization_code,refresh_token', '--redirect-uris', REDIRECT, '--scopes', 'users:read'],
    );
    metadata = (await call<Metadata>('/.well-known/oauth-authorization-server')).body;
  });

  it('create-client answers a public client without a secret', () => {
    expect(spa).toEqual({ client_id: expect.stringMatching(/^[0-9a-f-]{36}$/), client_secret: null });
  });

  it('GET /.well-known/oauth-authorization-server: RFC 8414 metadata, field by field, cacheable', async () => {
    const answer = await call<Metadata>('/.well-known/oauth-authorization-server');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(answer.headers.get('etag')).toMatch(/^".+"$/);
    const { issuer } = answer.body;
    expect(answer.body).toEqual({
      issuer: expect.stringMatching(/^https?:\/\//),
      authorization_endpoint: `${issuer}/v2/auth/authorize`,
      token_endpoint: `${issuer}/v2/auth/token`,
      jwks_uri: `${issuer}/v2/auth/jwks`,
      revocation_endpoint: `${issuer}/v2/auth/revoke`,
      introspection_endpoint: `${issuer}/v2/auth/introspect`,
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'password'],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['instances:write', 'system:read', 'users:read', 'users:write'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${issuer}/docs`,
    });
    expect(jwtPart(org.admin.access_token, 1).iss).toBe(issuer);
  });

  it('GET /v2/auth/authorize: the login page, zh-CN by default, no cache, framing refused, a strict CSP', async () => {
    const page = await browser(`/v2/auth/authorize?${query()}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(page.headers.get('set-cookie')).toMatch(
      /^oauth_csrf=[\w-]{43}; Path=\/v2\/auth\/authorize; HttpOnly; SameSite=Lax$/,
    );
    const html = await page.text();
    expect(html).toContain('<html lang="zh-CN">');
    expect(html).toContain('Acceptance SPA');
    const english = await browser(`/v2/auth/authorize?${query()}`, {
      headers: { 'accept-language': 'en-GB,en;q=0.9' },
    });
    expect(await english.text()).toContain('<html lang="en">');
  });

  it('GET /v2/auth/authorize: an unregistered redirect URI gets a 400 page; a plain challenge goes back with error, state and iss', async () => {
    const page = await browser(`/v2/auth/authorize?${query({ redirect_uri: 'https://evil.test/callback' })}`);
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
    const plain = await browser(`/v2/auth/authorize?${query({ code_challenge_method: 'plain' })}`);
    expect(plain.status).toBe(303);
    const location = new URL(plain.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'invalid_request',
      error_description: 'Only code_challenge_method=S256 is supported.',
      state: 'st4te',
      iss: metadata.issuer,
    });
  });

  it('GET /v2/auth/authorize: a parameter sent twice goes back as invalid_request; a repeated client_id, redirect_uri or state gets the 400 page', async () => {
    const twice = await browser(`/v2/auth/authorize?${query()}&scope=users:write`);
    expect(twice.status).toBe(303);
    const location = new URL(twice.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'invalid_request',
      error_description: expect.stringContaining('scope'),
      state: 'st4te',
      iss: metadata.issuer,
    });
    // Whom to send an error to, and with which state, is itself in doubt: never a redirect.
    for (const name of ['client_id', 'redirect_uri', 'state']) {
      const page = await browser(`/v2/auth/authorize?${query()}&${name}=${encodeURIComponent(REDIRECT)}`);
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
    }
    // An unregistered redirect URI is not sent anything, whatever else is wrong.
    const unregistered = await browser(
      `/v2/auth/authorize?${query({ redirect_uri: 'https://evil.test/callback' })}&scope=users:write`,
    );
    expect(unregistered.status).toBe(400);
    expect(unregistered.headers.get('location')).toBeNull();
  });

  it('POST /v2/auth/authorize then POST /v2/auth/token (authorization_code): a token set, field by field', async () => {
    const { location, code, verifier } = await signIn();
    expect(Object.fromEntries(location.searchParams)).toEqual({
      code: expect.stringMatching(/^[\w-]{43}$/),
      state: 'st4te',
      iss: metadata.issuer,
    });
    const answer = await exchange(code, verifier);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
      token_type: 'Bearer',
      expires_in: 7200,
      scope: 'users:read',
    });
    expect(jwtPart(answer.body.access_token, 1)).toMatchObject({ client_id: spa.client_id, org_id: org.org_id });
    const again = await exchange(code, verifier);
    expect(expectProblem(again, 400, 'invalid_grant').error).toBe('invalid_grant');
  });

  it('POST /v2/auth/introspect and /v2/auth/revoke: active, revoked, then active false', async () => {
    const { code, verifier } = await signIn();
    const set = (await exchange(code, verifier)).body;
    const basic = `Basic ${Buffer.from(`${org.client_id}:${org.client_secret}`).toString('base64')}`;
    const introspect = (token: string) =>
      call<Record<string, unknown>>('/v2/auth/introspect', { form: { token }, headers: { authorization: basic } });
    const active = await introspect(set.access_token);
    expect(active.status).toBe(200);
    const claims = jwtPart(set.access_token, 1);
    expect(active.body).toEqual({
      active: true,
      scope: 'users:read',
      client_id: spa.client_id,
      sub: claims.sub,
      exp: claims.exp,
      iat: claims.iat,
      iss: metadata.issuer,
      aud: claims.aud,
      jti: claims.jti,
      token_type: 'Bearer',
      org_id: org.org_id,
    });
    const publicIntrospection = await call('/v2/auth/introspect', {
      json: { token: set.access_token, client_id: spa.client_id },
    });
    expectProblem(publicIntrospection, 401, 'invalid_client');

    const revoked = await call('/v2/auth/revoke', { json: { token: set.refresh_token, client_id: spa.client_id } });
    expect({ status: revoked.status, text: revoked.text }).toEqual({ status: 200, text: '' });
    const unknown = await call('/v2/auth/revoke', { form: { token: 'never-issued', client_id: spa.client_id } });
    expect(unknown.status).toBe(200);
    expectProblem(await call('/v2/auth/revoke', { form: { client_id: spa.client_id } }), 400, 'invalid_request');

    let inactive: Record<string, unknown> = {};
    for (let attempt = 0; attempt < 20 && inactive.active !== false; attempt += 1) {
      inactive = (await introspect(set.access_token)).body;
      if (inactive.active !== false) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(inactive).toEqual({ active: false });
    expect((await introspect(set.refresh_token!)).body).toEqual({ active: false });
  });

  it('POST /v2/auth/token: a client asking for a grant it is not registered for gets 400 unauthorized_client', async () => {
    const answer = await call('/v2/auth/token', {
      json: {
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
        client_id: org.client_id,
        client_secret: org.client_secret,
      },
    });
    const problem = expectProblem(answer, 400, 'unauthorized_client');
    expect(problem).toMatchObject({ error: 'unauthorized_client', error_description: expect.any(String) });
  });
});
