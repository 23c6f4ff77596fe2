import { createLocalJWKSet, JSONWebKeySet, jwtVerify } from 'jose';

import {
  call,
  expectProblem,
  freshIp,
  issue,
  jwtPart,
  newOrg,
  raiseLimit,
  tokenRequest,
  TokenSet,
  uniqueEmail,
  User,
} from './support/client';

const ADMIN_SCOPES = ['instances:write', 'system:read', 'users:read', 'users:write'];
const MEMBER_SCOPES = ['instances:write', 'system:read', 'users:read'];
const VIEWER_SCOPES = ['system:read', 'users:read'];
const scopes = (scope: string) => scope.split(' ').sort();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Interface §2.2 / §4.2 / §5, contract §4: POST /v2/auth/token, every grant and every refusal. */
describe('POST /v2/auth/token', () => {
  let org: Awaited<ReturnType<typeof newOrg>>;

  /** A user with a password (active only after activation; here created by the admin). */
  const createUser = async (body: Record<string, unknown>) => {
    const answer = await call<User>('/v2/users', { token: org.clientToken, json: body });
    expect(answer.status).toBe(201);
    return answer.body;
  };

  /** Activates a user through the reset operation's one-time token (the e-mail flow has its own spec). */
  const activate = async (user: User, password: string) => {
    const reset = await call<{ token: string }>(`/v2/users/${user.id}/reset-password`, {
      token: org.clientToken,
      json: { send_email: false },
    });
    expect(reset.status).toBe(200);
    const set = await call<User>('/v2/users/me/password', { token: reset.body.token, json: { password } });
    expect(set.body.status).toBe('active');
  };

  beforeAll(async () => {
    org = await newOrg('tokens');
    raiseLimit(org.org_id, 'users.write');
  });

  describe('password grant', () => {
    it('issues the token set: exactly its fields, Bearer, expires_in 7200, the role’s default scopes, no-store', async () => {
      const answer = await tokenRequest({
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('pragma')).toBe('no-cache');
      const set = answer.body;
      expect(Object.keys(set).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      expect(set.token_type).toBe('Bearer');
      expect(set.expires_in).toBe(7200);
      expect(scopes(set.scope)).toEqual(ADMIN_SCOPES);
      expect(set.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/); // ≥ 256 bits, opaque
      expect(set.refresh_token).not.toContain('.');
    });

    it('signs an RFC 9068 JWT verifiable with GET /v2/auth/jwks, with every claim of contract §4', async () => {
      const set = await issue({ grant_type: 'password', username: org.adminEmail, password: org.adminPassword });
      const jwks = await call<JSONWebKeySet>('/v2/auth/jwks');
      expect(jwks.status).toBe(200);
      expect(jwks.body.keys.length).toBeGreaterThan(0);
      for (const key of jwks.body.keys) expect(Object.keys(key)).not.toContain('d'); // public halves only
      const header = jwtPart(set.access_token, 0);
      expect(header).toEqual(expect.objectContaining({ typ: 'at+jwt', kid: expect.any(String) }));
      expect(['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA']).toContain(header.alg);
      const { payload } = await jwtVerify(set.access_token, createLocalJWKSet(jwks.body), { typ: 'at+jwt' });
      expect(payload).toEqual(
        expect.objectContaining({
          iss: expect.any(String),
          sub: org.admin_user_id,
          aud: expect.anything(),
          jti: expect.any(String),
          scope: set.scope,
          org_id: org.org_id,
          client_id: 'account-platform-web',
        }),
      );
      expect(payload.exp! - payload.iat!).toBe(7200);
      expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(120);
    });

    it('takes a form-encoded body, a missing grant_type (password by default) and the e-mail in any case', async () => {
      const form = await tokenRequest({}, { form: { username: org.adminEmail, password: org.adminPassword } });
      expect(form.status).toBe(200);
      expect(form.body.token_type).toBe('Bearer');
      const loud = await tokenRequest({ username: org.adminEmail.toUpperCase(), password: org.adminPassword });
      expect(loud.status).toBe(200);
      expect(jwtPart(loud.body.access_token, 1).sub).toBe(org.admin_user_id);
    });

    it('accepts X-Device-Id', async () => {
      const answer = await tokenRequest(
        { grant_type: 'password', username: org.adminEmail, password: org.adminPassword },
        { headers: { 'x-device-id': 'acceptance-device-1' } },
      );
      expect(answer.status).toBe(200);
    });

    it('narrows to a requested subset of scopes, and refuses a scope the account lacks with invalid_scope', async () => {
      const narrow = await issue({
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
        scope: 'users:read',
      });
      expect(narrow.scope).toBe('users:read');
      expect(jwtPart(narrow.access_token, 1).scope).toBe('users:read');
      const refused = await tokenRequest({
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
        scope: 'users:read platform:root',
      });
      const problem = expectProblem(refused, 400, 'invalid_scope');
      expect(problem.error).toBe('invalid_scope');
      expect(problem.error_description).toEqual(expect.any(String));
    });

    it('gives each role its default scope set', async () => {
      for (const [role, expected] of [
        ['member', MEMBER_SCOPES],
        ['viewer', VIEWER_SCOPES],
      ] as const) {
        const email = uniqueEmail(role);
        const user = await createUser({ email, display_name: role, roles: [role], send_activation: false });
        await activate(user, 'role-password-1');
        const set = await issue({ grant_type: 'password', username: email, password: 'role-password-1' });
        expect({ role, scopes: scopes(set.scope) }).toEqual({ role, scopes: [...expected] });
      }
    });

    it('answers an unknown user and a wrong password alike: 400 invalid_grant', async () => {
      const unknown = await tokenRequest({ username: uniqueEmail('nobody'), password: 'wrong-password-1' });
      const wrong = await tokenRequest({ username: org.adminEmail, password: 'wrong-password-1' });
      const a = expectProblem(unknown, 400, 'invalid_grant');
      const b = expectProblem(wrong, 400, 'invalid_grant');
      const comparable = ({ request_id: _id, ...rest }: typeof a) => rest;
      expect(comparable(a)).toEqual(comparable(b));
      expect(a.error).toBe('invalid_grant');
      expect(a.error_description).toEqual(expect.any(String));
    });

    it('refuses a pending account with account_not_active, only after a correct password', async () => {
      const email = uniqueEmail('pending');
      await createUser({ email, display_name: 'Pending', password: 'pending-password-1', send_activation: false });
      const right = expectProblem(
        await tokenRequest({ username: email, password: 'pending-password-1' }),
        400,
        'account_not_active',
      );
      expect(right.error).toBe('invalid_grant');
      const wrong = expectProblem(
        await tokenRequest({ username: email, password: 'other-password-1' }),
        400,
        'invalid_grant',
      );
      expect(wrong.error).toBe('invalid_grant');
    });

    it('locks (username, IP) after 5 failures: 429 login_locked with Retry-After, correct password or not; other IPs are unaffected', async () => {
      const email = uniqueEmail('locked');
      const user = await createUser({ email, display_name: 'Locked', send_activation: false });
      await activate(user, 'locked-password-1');
      const ip = freshIp();
      // The auth tier admits 3 requests per IP and then one every 6 s: wait as Retry-After says.
      const attempt = async (password: string) => {
        for (;;) {
          const answer = await tokenRequest({ username: email, password }, { ip });
          if (answer.body?.code !== 'rate_limited') return answer;
          await sleep(Number(answer.headers.get('retry-after')) * 1000);
        }
      };
      for (let failure = 1; failure <= 5; failure += 1) {
        expectProblem(await attempt('wrong-password-1'), 400, 'invalid_grant');
      }
      for (const password of ['wrong-password-1', 'locked-password-1']) {
        const locked = await attempt(password);
        expectProblem(locked, 429, 'login_locked');
        const retryAfter = Number(locked.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(14 * 60);
        expect(retryAfter).toBeLessThanOrEqual(15 * 60);
      }
      expect((await tokenRequest({ username: email, password: 'locked-password-1' })).status).toBe(200);
    }, 120_000);
  });

  describe('client_credentials grant', () => {
    it('issues an access token without a refresh token, with the client’s scopes, from credentials in the body', async () => {
      const answer = await tokenRequest({
        grant_type: 'client_credentials',
        client_id: org.client_id,
        client_secret: org.client_secret!,
      });
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
      expect(answer.body).toEqual(expect.objectContaining({ token_type: 'Bearer', expires_in: 7200 }));
      expect(scopes(answer.body.scope)).toEqual(ADMIN_SCOPES);
      const claims = jwtPart(answer.body.access_token, 1);
      expect(claims).toEqual(expect.objectContaining({ client_id: org.client_id, org_id: org.org_id }));
    });

    it('takes HTTP Basic credentials (RFC 6749 §2.3.1), with JSON and form bodies', async () => {
      const basic = `Basic ${Buffer.from(`${org.client_id}:${org.client_secret}`).toString('base64')}`;
      const json = await tokenRequest({ grant_type: 'client_credentials' }, { headers: { authorization: basic } });
      expect(json.status).toBe(200);
      const form = await tokenRequest(
        {},
        { form: { grant_type: 'client_credentials' }, headers: { authorization: basic } },
      );
      expect(form.status).toBe(200);
      expect(jwtPart(form.body.access_token, 1).client_id).toBe(org.client_id);
    });

    it('refuses a wrong secret or an unknown client with 401 invalid_client', async () => {
      for (const body of [
        { grant_type: 'client_credentials', client_id: org.client_id, client_secret: 'not-the-secret' },
        { grant_type: 'client_credentials', client_id: 'no-such-client', client_secret: 'whatever' },
      ]) {
        const problem = expectProblem(await tokenRequest(body), 401, 'invalid_client');
        expect(problem.error).toBe('invalid_client');
        expect(problem.error_description).toEqual(expect.any(String));
      }
      const basic = `Basic ${Buffer.from(`${org.client_id}:wrong`).toString('base64')}`;
      expectProblem(
        await tokenRequest({ grant_type: 'client_credentials' }, { headers: { authorization: basic } }),
        401,
        'invalid_client',
      );
    });

    it('carries the Basic challenge of every 401 invalid_client, as the OpenAPI document says it does', async () => {
      type Header = { required?: boolean; schema?: { pattern?: string }; $ref?: string };
      const document = (
        await call<{
          paths: Record<string, { post: { responses: Record<string, { headers?: Record<string, Header> }> } }>;
          components: { headers: Record<string, Header> };
        }>('/v2/openapi.json')
      ).body;
      const refused = {
        '/v2/auth/token': { grant_type: 'client_credentials', client_id: org.client_id, client_secret: 'not-it' },
        '/v2/auth/revoke': { token: 'x', client_id: org.client_id, client_secret: 'not-it' },
        '/v2/auth/introspect': { token: 'x', client_id: org.client_id, client_secret: 'not-it' },
      };
      for (const [path, form] of Object.entries(refused)) {
        const answer = await call(path, { form });
        expectProblem(answer, 401, 'invalid_client');
        // RFC 6749 §5.2: the challenge of the scheme a client authenticates with.
        const challenge = answer.headers.get('www-authenticate');
        expect({ path, challenge }).toEqual({ path, challenge: expect.stringMatching(/^Basic realm="[^"]+"$/) });
        const declared = document.paths[path].post.responses['401'].headers?.['WWW-Authenticate'];
        const header = declared?.$ref ? document.components.headers[declared.$ref.split('/').at(-1)!] : declared;
        expect({
          path,
          required: header?.required,
          matches: new RegExp(header?.schema?.pattern ?? '$^').test(challenge!),
        }).toEqual({ path, required: true, matches: true });
      }
    });

    it('refuses credentials in both the body and HTTP Basic with invalid_request', async () => {
      const basic = `Basic ${Buffer.from(`${org.client_id}:${org.client_secret}`).toString('base64')}`;
      const problem = expectProblem(
        await tokenRequest(
          { grant_type: 'client_credentials', client_secret: org.client_secret! },
          { headers: { authorization: basic } },
        ),
        400,
        'invalid_request',
      );
      expect(problem.error).toBe('invalid_request');
    });
  });

  describe('refresh_token grant', () => {
    const login = () => issue({ grant_type: 'password', username: org.adminEmail, password: org.adminPassword });
    const refresh = (refreshToken: string, scope?: string) =>
      tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope ? { scope } : {}) });

    it('rotates: a new access and refresh token with the login’s scope; a narrower scope narrows the access token only', async () => {
      const first = await login();
      const second = await refresh(first.refresh_token!);
      expect(second.status).toBe(200);
      expect(Object.keys(second.body).sort()).toEqual([
        'access_token',
        'expires_in',
        'refresh_token',
        'scope',
        'token_type',
      ]);
      expect(second.body).toEqual(expect.objectContaining({ token_type: 'Bearer', expires_in: 7200 }));
      expect(second.body.refresh_token).not.toBe(first.refresh_token);
      expect(second.body.access_token).not.toBe(first.access_token);
      expect(scopes(second.body.scope)).toEqual(ADMIN_SCOPES);
      const narrowed = await refresh(second.body.refresh_token!, 'users:read');
      expect(narrowed.body.scope).toBe('users:read');
      const again = await refresh(narrowed.body.refresh_token!);
      expect(scopes(again.body.scope)).toEqual(ADMIN_SCOPES);
      expectProblem(await refresh(again.body.refresh_token!, 'users:read platform:root'), 400, 'invalid_scope');
    });

    it('keeps a used refresh token working for the 5 s grace window; after it, refuses it and revokes its family', async () => {
      const first = await login();
      const second = await refresh(first.refresh_token!);
      expect(second.status).toBe(200);
      const withinGrace = await refresh(first.refresh_token!);
      expect(withinGrace.status).toBe(200);
      await sleep(6_000);
      const reused = expectProblem(await refresh(first.refresh_token!), 400, 'invalid_grant');
      expect(reused.error).toBe('invalid_grant');
      // The whole family is revoked: the tokens issued from it are refused too.
      for (const set of [second.body, withinGrace.body]) {
        expectProblem(await refresh(set.refresh_token!), 400, 'invalid_grant');
      }
    });

    it('refuses an unknown refresh token with invalid_grant', async () => {
      const problem = expectProblem(await refresh('A'.repeat(43)), 400, 'invalid_grant');
      expect(problem.error).toBe('invalid_grant');
    });
  });

  describe('refusals of the request itself', () => {
    it('refuses an unknown grant_type with unsupported_grant_type', async () => {
      const problem = expectProblem(await tokenRequest({ grant_type: 'implicit' }), 400, 'unsupported_grant_type');
      expect(problem).toEqual(
        expect.objectContaining({ error: 'unsupported_grant_type', error_description: expect.any(String) }),
      );
    });

    it('refuses missing or repeated parameters with invalid_request', async () => {
      const bodies: Array<Record<string, string>> = [
        { grant_type: 'password', username: org.adminEmail },
        { grant_type: 'password', password: 'x-password-1' },
        { grant_type: 'refresh_token' },
        { grant_type: 'client_credentials' },
      ];
      for (const body of bodies) {
        const answer = await tokenRequest(body);
        expect([400, 401]).toContain(answer.status);
        const code = answer.status === 400 ? 'invalid_request' : 'invalid_client';
        expect(expectProblem(answer, answer.status, code).error).toBe(code);
      }
      const twice = await call('/v2/auth/token', {
        raw: 'grant_type=password&username=a%40b.test&username=c%40d.test&password=pw-123456',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(expectProblem(twice, 400, 'invalid_request').error).toBe('invalid_request');
    });

    it('answers a broken body with 400 malformed_body and another media type with 415', async () => {
      const broken = await call('/v2/auth/token', {
        raw: '{"grant_type":',
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(broken, 400, 'malformed_body');
      const array = await call('/v2/auth/token', { json: [] });
      expectProblem(array, 400, 'malformed_body');
      const text = await call('/v2/auth/token', {
        raw: 'grant_type=password',
        headers: { 'content-type': 'text/plain' },
      });
      expectProblem(text, 415, 'unsupported_media_type');
    });

    it('refuses a form whose percent-encoded octets are not UTF-8 with 400 malformed_body, not as a wrong password', async () => {
      // RFC 6749 Appendix B: a form's values are UTF-8. A Latin-1 client's `ë` (%EB) was read as U+FFFD:
      // its right password judged as another one, the refusal `invalid_grant`, counted toward the lockout.
      for (const password of ['Zo%EB-password-1', 'x-password-1%C3']) {
        const answer = await call('/v2/auth/token', {
          raw: `grant_type=password&username=${encodeURIComponent(org.adminEmail)}&password=${password}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        expect(expectProblem(answer, 400, 'malformed_body').error).toBe('invalid_request');
      }
    });

    it('holds the token endpoint to 10/min burst 20 per IP: 3 from a full bucket, then 429 rate_limited with Retry-After', async () => {
      const ip = freshIp();
      const answers: Array<Awaited<ReturnType<typeof tokenRequest>>> = [];
      for (let index = 0; index < 4; index += 1) {
        answers.push(await tokenRequest({ username: org.adminEmail, password: 'wrong-password-1' }, { ip }));
      }
      expect(answers.map((answer) => answer.status)).toEqual([400, 400, 400, 429]);
      expect(answers.map((answer) => answer.headers.get('x-ratelimit-limit'))).toEqual(['3', '3', '3', '3']);
      expect(answers.map((answer) => answer.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
      const limited = expectProblem(answers[3], 429, 'rate_limited');
      expect(limited.code).toBe('rate_limited');
      expect(Number(answers[3].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await tokenRequest({ username: org.adminEmail, password: org.adminPassword })).status).toBe(200);
    });
  });

  it('issues tokens the protected endpoints accept', async () => {
    const set: TokenSet = await issue({
      grant_type: 'password',
      username: org.adminEmail,
      password: org.adminPassword,
    });
    const me = await call<User>('/v2/users/me', { token: set.access_token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(org.admin_user_id);
  });
});
