import { createHmac } from 'node:crypto';

import {
  ApiClient,
  Bootstrap,
  bootstrapOrg,
  Problem,
  raiseLimit,
  request,
  TestStack,
  TokenSet,
  User,
} from '@acct/testing';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

const ADMIN_PASSWORD = 'admin-password-1';

/** Issue 3, end to end through the gateway: bootstrap → tokens → users, with every contract rule. */
describe('accounts and tokens', () => {
  let stack: TestStack;
  let org: Bootstrap;
  let adminToken: string;
  let clientToken: string;
  let sequence = 0;
  const email = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@example.com`;

  // Each token request comes from its own address (the gateway trusts X-Forwarded-For from the test
  // here), so the auth tier's 3-request bucket per IP does not interfere; rate limits have their own tests.
  let address = 0;
  const clientIp = () => `198.51.100.${(address = (address % 250) + 1)}`;
  let api: ApiClient;
  const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    api.tokenRequest(body, { ip: clientIp(), headers });
  const createUser = (body: unknown, accessToken = adminToken, headers: Record<string, string> = {}) =>
    api.createUser(accessToken, body, { headers });

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''));
    org = bootstrapOrg(stack, 'acme', 'Admin@Acme.test', ADMIN_PASSWORD);
    for (const group of ['users.write', 'users.read']) raiseLimit(stack, org.org_id, group);
    const admin = await token({ grant_type: 'password', username: 'admin@acme.test', password: ADMIN_PASSWORD });
    expect(admin.status).toBe(200);
    adminToken = admin.body.access_token;
    const client = await token({
      grant_type: 'client_credentials',
      client_id: org.client_id,
      client_secret: org.client_secret!,
    });
    expect(client.status).toBe(200);
    clientToken = client.body.access_token;
  });

  afterAll(async () => {
    await stack?.close();
  });

  describe('bootstrap CLI', () => {
    it('prints the org, an active admin and a confidential client', () => {
      expect(Object.keys(org).sort()).toEqual(['admin_user_id', 'client_id', 'client_secret', 'org_id']);
      expect(org.client_secret).toEqual(expect.any(String));
    });

    it('is idempotent: the same ids again and no new secret', () => {
      const again = bootstrapOrg(stack, 'acme', 'admin@acme.test', ADMIN_PASSWORD);
      expect(again).toEqual({ ...org, client_secret: null });
    });
  });

  describe('POST /v2/auth/token', () => {
    it('issues a token set for the password grant with the role default scopes', async () => {
      const { status, body, headers } = await token({
        grant_type: 'password',
        username: 'ADMIN@acme.test',
        password: ADMIN_PASSWORD,
      });
      expect(status).toBe(200);
      expect(headers.get('cache-control')).toBe('no-store');
      expect(body).toEqual({
        access_token: expect.any(String),
        refresh_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 7200,
        scope: expect.any(String),
      });
      expect(body.scope.split(' ').sort()).toEqual(['instances:write', 'system:read', 'users:read', 'users:write']);
      const [header, claims] = body.access_token
        .split('.')
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>);
      expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
      expect(Object.keys(claims)).toEqual(
        expect.arrayContaining(['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'scope', 'org_id', 'client_id']),
      );
      expect(claims).toMatchObject({ sub: org.admin_user_id, org_id: org.org_id });
      expect((claims.exp as number) - (claims.iat as number)).toBe(7200);
      expect(Buffer.byteLength(body.refresh_token!, 'utf8')).toBeGreaterThanOrEqual(43);
    });

    it('narrows scopes on request and refuses scopes the account does not have', async () => {
      const narrow = await token({
        grant_type: 'password',
        username: 'admin@acme.test',
        password: ADMIN_PASSWORD,
        scope: 'users:read',
      });
      expect(narrow.body.scope).toBe('users:read');
      const wide = await token({
        grant_type: 'password',
        username: 'admin@acme.test',
        password: ADMIN_PASSWORD,
        scope: 'users:read root:everything',
      });
      expect(wide.status).toBe(400);
      expect(wide.body).toMatchObject({ code: 'invalid_scope', error: 'invalid_scope' });
    });

    it('takes form-encoded bodies and HTTP Basic client credentials', async () => {
      const response = await fetch(stack.url('/v2/auth/token'), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': clientIp(),
          authorization: `Basic ${Buffer.from(`${org.client_id}:${org.client_secret}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as TokenSet;
      expect(body.token_type).toBe('Bearer');
      expect(body.refresh_token).toBeUndefined();
    });

    // A public client in a browser exchanges its code, refreshes and signs out with fetch from its own
    // origin (contract §6): without CORS the browser kept every answer from it (the code used up all the same).
    it("lets a browser app read the token endpoint's, revocation's, JWKS' and discovery's answers from its origin (CORS)", async () => {
      const origin = 'https://app.example';
      const cors = (path: string, init: RequestInit = {}) =>
        fetch(stack.url(path), {
          ...init,
          headers: { origin, 'x-forwarded-for': clientIp(), ...(init.headers as Record<string, string>) },
        });
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const granted = await cors('/v2/auth/token', {
        method: 'POST',
        headers: form,
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: org.client_id,
          client_secret: org.client_secret!,
        }).toString(),
      });
      const refused = await cors('/v2/auth/token', { method: 'POST', headers: form, body: 'grant_type=refresh_token' });
      const revoked = await cors('/v2/auth/revoke', {
        method: 'POST',
        headers: form,
        body: new URLSearchParams({
          token: 'x',
          client_id: org.client_id,
          client_secret: org.client_secret!,
        }).toString(),
      });
      const keys = await cors('/v2/auth/jwks');
      const metadata = await cors('/.well-known/oauth-authorization-server');
      expect([granted, refused, revoked, keys, metadata].map((answer) => answer.status)).toEqual([
        200, 400, 200, 200, 200,
      ]);
      for (const answer of [granted, refused, revoked, keys, metadata]) {
        expect(answer.headers.get('access-control-allow-origin')).toBe('*');
        expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      }
      expect(refused.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
      // A password login's device credential comes back as a header, and is sent back as one.
      expect(granted.headers.get('access-control-expose-headers')).toContain('X-Device-Token');

      // A JSON body or an Authorization header is preflighted: answered, and counted like any request.
      const preflight = await cors('/v2/auth/token', {
        method: 'OPTIONS',
        headers: {
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Content-Type/);
      expect(preflight.headers.get('access-control-allow-headers')).toContain('X-Device-Token');
      expect(preflight.headers.get('x-ratelimit-limit')).not.toBeNull();

      // The authorization endpoint is navigated to, never fetched; other paths and plain OPTIONS are as before.
      const page = await cors('/v2/auth/authorize?client_id=x');
      expect(page.headers.get('access-control-allow-origin')).toBeNull();
      expect((await cors('/v2/users/me')).headers.get('access-control-allow-origin')).toBeNull();
      expect((await cors('/v2/auth/token', { method: 'OPTIONS' })).status).toBe(405);
    });

    // Discovery and the keys are `Cache-Control: public`: a shared cache that stored the answer to a
    // request without `Origin` (a server-side client) hands that copy to the browser app too (RFC 9111
    // §4.1: only the headers `Vary` names select another), so it must be readable cross-origin as well.
    it('lets a browser app read a cached copy of discovery and the keys, whoever fetched it first', async () => {
      for (const path of ['/.well-known/oauth-authorization-server', '/v2/auth/jwks']) {
        const answer = await fetch(stack.url(path), { headers: { 'x-forwarded-for': clientIp() } });
        expect(answer.headers.get('cache-control')).toMatch(/^public/);
        const vary = (answer.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);
        expect({
          path,
          readable: answer.headers.get('access-control-allow-origin') === '*' || vary.includes('origin'),
        }).toEqual({ path, readable: true });
      }
    });

    it('gives unknown user and wrong password the same answer', async () => {
      const unknown = await token({ grant_type: 'password', username: 'nobody@acme.test', password: 'whatever-1' });
      const wrong = await token({ grant_type: 'password', username: 'admin@acme.test', password: 'whatever-1' });
      expect(unknown.status).toBe(400);
      expect(wrong.status).toBe(400);
      const { request_id: _a, ...unknownBody } = unknown.body as unknown as Problem & { request_id: string };
      const { request_id: _b, ...wrongBody } = wrong.body as unknown as Problem & { request_id: string };
      expect(unknownBody).toEqual(wrongBody);
      expect(unknownBody).toMatchObject({ code: 'invalid_grant', error: 'invalid_grant' });
    });

    it('refuses a wrong client secret with 401 invalid_client', async () => {
      const { status, body } = await token({
        grant_type: 'client_credentials',
        client_id: org.client_id,
        client_secret: 'not-the-secret',
      });
      expect(status).toBe(401);
      expect(body).toMatchObject({ code: 'invalid_client', error: 'invalid_client' });
    });

    it('refuses an unknown grant type and a missing field', async () => {
      expect((await token({ grant_type: 'implicit' })).body).toMatchObject({ code: 'unsupported_grant_type' });
      expect((await token({ grant_type: 'password', username: 'admin@acme.test' })).body).toMatchObject({
        code: 'invalid_request',
      });
    });

    it('lets a pending account know it is not active only after a correct password', async () => {
      const pendingEmail = email('pending');
      expect((await createUser({ email: pendingEmail, display_name: 'P', password: 'pending-pass-1' })).status).toBe(
        201,
      );
      const right = await token({ grant_type: 'password', username: pendingEmail, password: 'pending-pass-1' });
      expect(right.status).toBe(400);
      expect(right.body).toMatchObject({ code: 'account_not_active', error: 'invalid_grant' });
      const wrong = await token({ grant_type: 'password', username: pendingEmail, password: 'wrong-pass-1' });
      expect(wrong.body).toMatchObject({ code: 'invalid_grant' });
    });

    it('rotates refresh tokens: the old one works for 5 s, then reuse revokes the whole family', async () => {
      const first = await token({ grant_type: 'password', username: 'admin@acme.test', password: ADMIN_PASSWORD });
      const original = first.body.refresh_token!;
      const rotated = await token({ grant_type: 'refresh_token', refresh_token: original });
      expect(rotated.status).toBe(200);
      expect(rotated.body.refresh_token).not.toBe(original);
      const withinGrace = await token({ grant_type: 'refresh_token', refresh_token: original });
      expect(withinGrace.status).toBe(200);
      const newest = withinGrace.body.refresh_token!;
      await new Promise((resolve) => setTimeout(resolve, 6000));
      const reused = await token({ grant_type: 'refresh_token', refresh_token: original });
      expect(reused.status).toBe(400);
      expect(reused.body).toMatchObject({ code: 'invalid_grant' });
      const afterRevocation = await token({ grant_type: 'refresh_token', refresh_token: newest });
      expect(afterRevocation.status).toBe(400);
      expect(afterRevocation.body).toMatchObject({ code: 'invalid_grant' });
    });

    it('narrows scope on refresh but never widens it', async () => {
      const first = await token({
        grant_type: 'password',
        username: 'admin@acme.test',
        password: ADMIN_PASSWORD,
        scope: 'users:read system:read',
      });
      const narrowed = await token({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token!,
        scope: 'system:read',
      });
      expect(narrowed.body.scope).toBe('system:read');
      const widened = await token({
        grant_type: 'refresh_token',
        refresh_token: narrowed.body.refresh_token!,
        scope: 'users:write',
      });
      expect(widened.body).toMatchObject({ code: 'invalid_scope' });
    });

    it('publishes the verification keys at /v2/auth/jwks', async () => {
      const { status, body } = await request<{ keys: Array<Record<string, string>> }>(stack.url('/v2/auth/jwks'));
      expect(status).toBe(200);
      expect(body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(body.keys[0]).not.toHaveProperty('d');
    });
  });

  describe('POST /v2/users', () => {
    it('creates a pending user with the defaults and shows only the user fields', async () => {
      const address = email('new');
      const { status, headers, body } = await createUser({
        email: `  ${address.toUpperCase()} `,
        display_name: ' New ',
      });
      expect(status).toBe(201);
      expect(headers.get('location')).toBe(`/v2/users/${body.id}`);
      expect(Object.keys(body).sort()).toEqual(['created_at', 'display_name', 'email', 'id', 'roles', 'status']);
      expect(body).toMatchObject({
        email: address.toUpperCase(),
        display_name: 'New',
        status: 'pending',
        roles: ['member'],
      });
      expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
      const fetched = await request<User>(stack.url(`/v2/users/${body.id}`), { token: adminToken });
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(body);
    });

    // Contract §3: "valid address syntax". An internationalised top-level domain is sent in its ASCII
    // form (RFC 5890 §2.3.2.1: `xn--…`), a host name like any other (RFC 5321 §4.1.2): .中国, .рф.
    it('accepts an address under an internationalised top-level domain, in its ASCII form', async () => {
      const openapi = await request<{
        components: { schemas: { User: { properties: { email: { pattern: string } } } } };
      }>(stack.url('/v2/openapi.json'));
      const documented = new RegExp(openapi.body.components.schemas.User.properties.email.pattern);
      for (const domain of ['example.xn--fiqs8s', 'xn--80ak6aa92e.xn--p1ai']) {
        const address = email('idn').replace('example.com', domain);
        const created = await createUser({ email: address, display_name: 'IDN' });
        expect({ address, status: created.status, errors: created.body.errors }).toEqual({
          address,
          status: 201,
          errors: undefined,
        });
        expect(created.body.email).toBe(address);
        // The OpenAPI document's User says so too.
        expect({ address, documented: documented.test(address) }).toEqual({ address, documented: true });
      }
    });

    it('works with a client-credentials token too', async () => {
      expect((await createUser({ email: email('by-client'), display_name: 'C' }, clientToken)).status).toBe(201);
    });

    it('answers GET /v2/users/me with the caller', async () => {
      const { status, body } = await request<User>(stack.url('/v2/users/me'), { token: adminToken });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        id: org.admin_user_id,
        email: 'Admin@Acme.test',
        status: 'active',
        roles: ['admin'],
      });
    });

    it('lists every failing field with validation_failed and creates nothing', async () => {
      const address = email('invalid');
      const { status, body } = await createUser({
        email: address,
        display_name: '',
        password: 'short',
        roles: ['member', 'member'],
        profile: { timezone: 'Nowhere/Land' },
        nickname: 'x',
      });
      expect(status).toBe(400);
      expect(body.code).toBe('validation_failed');
      expect(body.errors?.map((error) => error.field).sort()).toEqual(
        ['display_name', 'nickname', 'password', 'profile.timezone', 'roles'].sort(),
      );
      expect((await createUser({ email: address, display_name: 'Fine' })).status).toBe(201);
    });

    it('refuses a duplicate e-mail, whatever its case, with 409 email_taken', async () => {
      const address = email('dup');
      expect((await createUser({ email: address, display_name: 'One' })).status).toBe(201);
      const again = await createUser({ email: address.toUpperCase(), display_name: 'Two' });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('email_taken');
    });

    it('lets exactly one of 20 concurrent creates of one e-mail win', async () => {
      const address = email('race');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) => createUser({ email: address, display_name: `Racer ${index}` })),
      );
      expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
      expect(answers.filter((answer) => answer.status === 409 && answer.body.code === 'email_taken')).toHaveLength(19);
    });

    it('refuses another org and roles above the caller with 403 forbidden', async () => {
      const otherOrg = await createUser({
        email: email('other-org'),
        display_name: 'O',
        org_id: '6d1f1c55-0000-4000-8000-000000000000',
      });
      expect(otherOrg.status).toBe(403);
      expect(otherOrg.body.code).toBe('forbidden');
      const memberEmail = email('member');
      await createUser({ email: memberEmail, display_name: 'M', roles: ['member'], password: 'member-pass-1' });
      // The member cannot log in while pending; a member-scoped token cannot create users anyway.
      const viewerToken = (
        await token({
          grant_type: 'client_credentials',
          client_id: org.client_id,
          client_secret: org.client_secret!,
          scope: 'users:read',
        })
      ).body.access_token;
      const noScope = await createUser({ email: email('x'), display_name: 'X' }, viewerToken);
      expect(noScope.status).toBe(403);
      expect(noScope.body.code).toBe('insufficient_scope');
    });

    it('replays an Idempotency-Key: the same 201, marked as a replay', async () => {
      const key = `key-${Date.now()}`;
      const body = { email: email('idem'), display_name: 'Idem' };
      const first = await createUser(body, adminToken, { 'Idempotency-Key': key });
      const second = await createUser({ display_name: 'Idem', email: body.email }, adminToken, {
        'Idempotency-Key': key,
      });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
    });

    it('refuses the same key with another body with 422 idempotency_key_reused', async () => {
      const key = `key-reuse-${Date.now()}`;
      expect(
        (await createUser({ email: email('a'), display_name: 'A' }, adminToken, { 'Idempotency-Key': key })).status,
      ).toBe(201);
      const other = await createUser({ email: email('b'), display_name: 'B' }, adminToken, { 'Idempotency-Key': key });
      expect(other.status).toBe(422);
      expect(other.body.code).toBe('idempotency_key_reused');
    });

    it('names a malformed Idempotency-Key in errors[], beside every failing body field', async () => {
      const longKey = { 'Idempotency-Key': 'k'.repeat(256) };
      const keyOnly = await createUser({ email: email('key-long'), display_name: 'K' }, adminToken, longKey);
      expect(keyOnly.status).toBe(400);
      expect(keyOnly.body.code).toBe('validation_failed');
      expect(keyOnly.body.errors?.map((error) => error.field)).toEqual(['Idempotency-Key']);
      const both = await createUser({ email: email('key-both'), display_name: '' }, adminToken, longKey);
      expect(both.status).toBe(400);
      expect(both.body.errors?.map((error) => error.field).sort()).toEqual(['Idempotency-Key', 'display_name'].sort());
    });

    it('creates exactly one user for 20 concurrent requests with one key', async () => {
      const key = `key-race-${Date.now()}`;
      const body = { email: email('idem-race'), display_name: 'Race' };
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => createUser(body, adminToken, { 'Idempotency-Key': key })),
      );
      const created = answers.filter((answer) => answer.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1);
      for (const answer of answers) {
        if (answer.status === 201) continue;
        expect(answer.body.code).toBe('idempotency_key_in_use');
        expect(answer.headers.get('retry-after')).toBe('1');
      }
      const again = await createUser(body, adminToken, { 'Idempotency-Key': key });
      expect(again.body.id).toBe(created[0].body.id);
    });

    it("keeps each org's idempotency keys separate", async () => {
      const other = bootstrapOrg(stack, 'globex', email('globex-admin'), ADMIN_PASSWORD);
      const otherToken = (
        await token({
          grant_type: 'client_credentials',
          client_id: other.client_id,
          client_secret: other.client_secret!,
        })
      ).body.access_token;
      const key = `shared-${Date.now()}`;
      const mine = await createUser({ email: email('mine'), display_name: 'Mine' }, adminToken, {
        'Idempotency-Key': key,
      });
      const theirs = await createUser({ email: email('theirs'), display_name: 'Theirs' }, otherToken, {
        'Idempotency-Key': key,
      });
      expect(mine.status).toBe(201);
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      // And another org's user is invisible: 404, not 403.
      const peek = await request<Problem>(stack.url(`/v2/users/${mine.body.id}`), { token: otherToken });
      expect(peek.status).toBe(404);
      expect(peek.body.code).toBe('not_found');
    });
  });

  describe('forged and unusable tokens', () => {
    const expectUnauthenticated = async (accessToken: string) => {
      const { status, headers, body } = await request<Problem>(stack.url('/v2/users/me'), { token: accessToken });
      expect(status).toBe(401);
      expect(body.code).toBe('unauthenticated');
      expect(headers.get('www-authenticate')).toContain('error="invalid_token"');
    };
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claimsOf = (accessToken: string) =>
      JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
    const kidOf = (accessToken: string) =>
      (JSON.parse(Buffer.from(accessToken.split('.')[0], 'base64url').toString()) as { kid: string }).kid;

    it('refuses alg "none"', async () => {
      await expectUnauthenticated(
        `${part({ alg: 'none', typ: 'at+jwt', kid: kidOf(adminToken) })}.${part(claimsOf(adminToken))}.`,
      );
    });

    it('refuses HS256 signed with the published public key', async () => {
      const { body } = await request<{ keys: object[] }>(stack.url('/v2/auth/jwks'));
      const signingInput = `${part({ alg: 'HS256', typ: 'at+jwt', kid: kidOf(adminToken) })}.${part(claimsOf(adminToken))}`;
      const signature = createHmac('sha256', JSON.stringify(body.keys[0])).update(signingInput).digest('base64url');
      await expectUnauthenticated(`${signingInput}.${signature}`);
    });

    it('refuses a token signed by an unknown key, expired, or for another audience', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      await exportJWK(publicKey);
      const claims = claimsOf(adminToken);
      const forge = (overrides: Record<string, unknown>, kid = 'unknown-kid') =>
        new SignJWT({ ...claims, ...overrides })
          .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
          .sign(privateKey);
      await expectUnauthenticated(await forge({}));
      // With the real kid but our key: a bad signature.
      await expectUnauthenticated(await forge({ exp: Math.floor(Date.now() / 1000) - 3600 }, kidOf(adminToken)));
      await expectUnauthenticated(await forge({ aud: 'someone-else' }, kidOf(adminToken)));
    });
  });
});
