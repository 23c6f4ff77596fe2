import { randomUUID } from 'node:crypto';

import { Bootstrap, bootstrapOrg, raiseLimit, setRateLimit, TestStack, totp } from '@acct/testing';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { generateKeyPair, SignJWT } from 'jose';

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, { headers?: Record<string, Json>; content?: Record<string, { schema: Json }> }>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, Json> };
}

const ADMIN_PASSWORD = 'admin-password-1';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * Issue 6 item 2: `GET /v2/openapi.json` is generated from the code, and every response it documents
 * (operation × status) is produced here against the real stack and checked against it: status,
 * content type, required headers and the body against the documented schema. A documented status
 * without a scenario below fails, so the document cannot promise what nobody has seen.
 */
describe('the OpenAPI document against real responses', () => {
  let stack: TestStack;
  let document: OpenApiDocument;
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

  let org: Bootstrap;
  let adminToken: string;
  /** Admin tokens narrowed to one scope, for 403 insufficient_scope. */
  let readOnlyToken: string;
  let systemOnlyToken: string;
  /** A client of an org whose every group allows one request at a time (60/min, burst 1), for 429s. */
  let throttledToken: string;
  /** A client_credentials token: not a user, so `/v2/users/me` finds nobody. */
  let clientToken: string;
  let existingEmail: string;
  /** A public client of the authorization code flow, and a login form loaded before the outage. */
  let browserClient: string;
  let formBeforeOutage: { form: Record<string, string>; cookie: string };

  let address = 0;
  const clientIp = () => `198.51.100.${(address = (address % 250) + 1)}`;
  /**
   * An address of its own for a scenario that empties its per-IP bucket: clientIp's addresses come
   * round again after 250 calls, and a later scenario must not find a bucket a 429 scenario emptied.
   */
  let spent = 0;
  const spentIp = () => `203.0.113.${(spent += 1)}`;
  let sequence = 0;
  const email = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@example.com`;

  const call = (
    path: string,
    init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string>; ip?: string } = {},
  ) => {
    const headers: Record<string, string> = { 'x-forwarded-for': init.ip ?? clientIp(), ...init.headers };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined) headers['content-type'] ??= 'application/json';
    return fetch(stack.url(path), {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers,
      body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
    });
  };
  const passwordGrant = async (scope?: string) => {
    const response = await call('/v2/auth/token', {
      body: {
        grant_type: 'password',
        username: 'admin@openapi.test',
        password: ADMIN_PASSWORD,
        ...(scope ? { scope } : {}),
      },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { access_token: string }).access_token;
  };
  /** Repeats a request until its bucket is empty; the 429. */
  const exhaust = async (request: () => Promise<Response>) => {
    for (let attempt = 0; attempt < 30; attempt += 1) {
      const response = await request();
      if (response.status === 429) return response;
      await response.arrayBuffer();
    }
    throw new Error('the bucket never ran empty');
  };
  const createUser = async (sendActivation = false) => {
    const response = await call('/v2/users', {
      token: adminToken,
      body: { email: email('user'), display_name: 'Doc User', send_activation: sendActivation },
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  };
  /** A one-time password:set token of a new pending user (the reset operation with send_email false). */
  const oneTimeToken = async () => {
    const id = await createUser();
    const response = await call(`/v2/users/${id}/reset-password`, { token: adminToken, body: { send_email: false } });
    expect(response.status).toBe(200);
    return ((await response.json()) as { token: string }).token;
  };
  /** A new, active member who signs in with a password (MFA is per user), and its access token. */
  const activeMember = async () => {
    const created = await call('/v2/users', {
      token: adminToken,
      body: { email: email('member'), display_name: 'Member', send_activation: false },
    });
    const user = (await created.json()) as { id: string; email: string };
    const reset = await call(`/v2/users/${user.id}/reset-password`, { token: adminToken, body: { send_email: false } });
    const { token } = (await reset.json()) as { token: string };
    const activated = await call('/v2/users/me/password', { token, body: { password: 'member-password-1' } });
    expect(activated.status).toBe(200);
    const issued = await call('/v2/auth/token', {
      body: { grant_type: 'password', username: user.email, password: 'member-password-1' },
    });
    expect(issued.status).toBe(200);
    return { email: user.email, token: ((await issued.json()) as { access_token: string }).access_token };
  };
  /** A member with two-step verification enabled. */
  const memberWithMfa = async () => {
    const member = await activeMember();
    const enrolled = await call('/v2/users/me/mfa/totp', {
      token: member.token,
      body: { password: 'member-password-1' },
    });
    const { secret } = (await enrolled.json()) as { secret: string };
    const confirmed = await call('/v2/users/me/mfa/totp/confirm', {
      token: member.token,
      body: { code: totp(secret) },
    });
    return { ...member, confirmed };
  };
  const REDIRECT_URI = 'https://app.openapi.test/callback';
  const authorizeQuery = (fields: Record<string, string> = {}) =>
    new URLSearchParams({
      response_type: 'code',
      client_id: browserClient,
      redirect_uri: REDIRECT_URI,
      state: 'xyz',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGMSMuw-cM',
      code_challenge_method: 'S256',
      ...fields,
    }).toString();
  /** The login page's form fields and the CSRF cookie, as a browser keeps them. */
  const loginForm = async () => {
    const page = await call(`/v2/auth/authorize?${authorizeQuery()}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const form = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1], match[2]]),
    );
    return { form, cookie: (page.headers.get('set-cookie') ?? '').split(';')[0] };
  };
  const submitLogin = (
    login: { form: Record<string, string>; cookie: string },
    fields: Record<string, string>,
    ip?: string,
  ) =>
    fetch(stack.url('/v2/auth/authorize'), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: login.cookie,
        'x-forwarded-for': ip ?? clientIp(),
      },
      body: new URLSearchParams({ ...login.form, ...fields }).toString(),
    });
  const hugeBody = JSON.stringify({ email: 'a@b.co', display_name: 'x'.repeat(70 * 1024) });
  const BOGUS_ONE_TIME_TOKEN = 'A'.repeat(43);

  /**
   * One real way to get each documented answer, keyed `<METHOD> <path> <status>`. The 503s stop the
   * backends, so they run last.
   */
  const scenarios: Record<string, () => Promise<Response>> = {
    // POST /v2/auth/token
    'POST /v2/auth/token 200': () =>
      call('/v2/auth/token', {
        body: { grant_type: 'password', username: 'admin@openapi.test', password: ADMIN_PASSWORD },
        headers: { 'x-device-id': 'openapi-test' },
      }),
    'POST /v2/auth/token 400': () =>
      call('/v2/auth/token', { body: { grant_type: 'password', username: 'admin@openapi.test', password: 'wrong-1' } }),
    'POST /v2/auth/token 401': () =>
      call('/v2/auth/token', {
        body: 'grant_type=client_credentials',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${org.client_id}:not-the-secret`).toString('base64')}`,
        },
      }),
    'POST /v2/auth/token 403': async () => {
      const member = await memberWithMfa();
      expect(member.confirmed.status).toBe(200);
      return call('/v2/auth/token', {
        body: { grant_type: 'password', username: member.email, password: 'member-password-1' },
      });
    },
    'POST /v2/auth/token 413': () => call('/v2/auth/token', { body: hugeBody }),
    'POST /v2/auth/token 415': () =>
      call('/v2/auth/token', { body: 'grant_type=password', headers: { 'content-type': 'text/plain' } }),
    'POST /v2/auth/token 429': () => {
      const ip = spentIp();
      return exhaust(() =>
        call('/v2/auth/token', {
          ip,
          body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: 'not-the-secret' },
        }),
      );
    },
    // GET /v2/auth/jwks
    'GET /v2/auth/jwks 200': () => call('/v2/auth/jwks'),
    'GET /v2/auth/jwks 429': () => exhaust(() => call('/v2/auth/jwks', { token: throttledToken })),
    // GET and POST /v2/auth/authorize (HTML)
    'GET /v2/auth/authorize 200': () => call(`/v2/auth/authorize?${authorizeQuery()}`),
    'GET /v2/auth/authorize 303': () =>
      fetch(stack.url(`/v2/auth/authorize?${authorizeQuery({ code_challenge_method: 'plain' })}`), {
        redirect: 'manual',
        headers: { 'x-forwarded-for': clientIp() },
      }),
    'GET /v2/auth/authorize 400': () => call(`/v2/auth/authorize?${authorizeQuery({ client_id: 'unknown' })}`),
    'GET /v2/auth/authorize 429': () => {
      const ip = spentIp();
      return exhaust(() => call(`/v2/auth/authorize?${authorizeQuery()}`, { ip }));
    },
    'POST /v2/auth/authorize 200': async () => {
      const member = await memberWithMfa();
      return submitLogin(await loginForm(), { username: member.email, password: 'member-password-1' });
    },
    'POST /v2/auth/authorize 303': async () =>
      submitLogin(await loginForm(), { username: 'admin@openapi.test', password: ADMIN_PASSWORD }),
    'POST /v2/auth/authorize 400': async () =>
      submitLogin(await loginForm(), { username: 'admin@openapi.test', password: 'wrong-1' }),
    'POST /v2/auth/authorize 403': async () =>
      submitLogin({ ...(await loginForm()), cookie: '' }, { username: 'admin@openapi.test', password: ADMIN_PASSWORD }),
    'POST /v2/auth/authorize 415': () => call('/v2/auth/authorize', { body: { username: 'x' } }),
    'POST /v2/auth/authorize 413': () =>
      call('/v2/auth/authorize', {
        body: `username=${'x'.repeat(70 * 1024)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    'POST /v2/auth/authorize 429': async () => {
      const login = await loginForm();
      const ip = spentIp();
      return exhaust(() => submitLogin(login, { username: 'nobody@openapi.test', password: 'wrong-1' }, ip));
    },
    // POST /v2/auth/revoke and /v2/auth/introspect
    'POST /v2/auth/revoke 200': () =>
      call('/v2/auth/revoke', { body: { token: 'an-unknown-token', client_id: browserClient } }),
    'POST /v2/auth/revoke 400': () => call('/v2/auth/revoke', { body: { client_id: browserClient } }),
    'POST /v2/auth/revoke 401': () =>
      call('/v2/auth/revoke', { body: { token: 'x', client_id: org.client_id, client_secret: 'not-the-secret' } }),
    'POST /v2/auth/revoke 413': () => call('/v2/auth/revoke', { body: hugeBody }),
    'POST /v2/auth/revoke 415': () =>
      call('/v2/auth/revoke', { body: 'token=x', headers: { 'content-type': 'text/plain' } }),
    'POST /v2/auth/revoke 429': () => {
      const ip = spentIp();
      return exhaust(() => call('/v2/auth/revoke', { ip, body: { token: 'x', client_id: browserClient } }));
    },
    'POST /v2/auth/introspect 200': () =>
      call('/v2/auth/introspect', {
        body: `token=${adminToken}`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${org.client_id}:${org.client_secret}`).toString('base64')}`,
        },
      }),
    'POST /v2/auth/introspect 400': () =>
      call('/v2/auth/introspect', { body: { client_id: org.client_id, client_secret: org.client_secret! } }),
    'POST /v2/auth/introspect 401': () =>
      call('/v2/auth/introspect', { body: { token: 'x', client_id: org.client_id, client_secret: 'not-the-secret' } }),
    'POST /v2/auth/introspect 413': () => call('/v2/auth/introspect', { body: hugeBody }),
    'POST /v2/auth/introspect 415': () =>
      call('/v2/auth/introspect', { body: 'token=x', headers: { 'content-type': 'text/plain' } }),
    'POST /v2/auth/introspect 429': () => {
      const ip = spentIp();
      return exhaust(() =>
        call('/v2/auth/introspect', { ip, body: { token: 'x', client_id: org.client_id, client_secret: 'wrong' } }),
      );
    },
    // GET /.well-known/oauth-authorization-server
    'GET /.well-known/oauth-authorization-server 200': () => call('/.well-known/oauth-authorization-server'),
    'GET /.well-known/oauth-authorization-server 304': async () => {
      const first = await call('/.well-known/oauth-authorization-server');
      return call('/.well-known/oauth-authorization-server', {
        headers: { 'if-none-match': first.headers.get('etag')! },
      });
    },
    'GET /.well-known/oauth-authorization-server 429': () =>
      exhaust(() => call('/.well-known/oauth-authorization-server', { token: throttledToken })),
    // GET /v2/system/health
    'GET /v2/system/health 200': () => call('/v2/system/health'),
    'GET /v2/system/health 429': () => exhaust(() => call('/v2/system/health', { token: throttledToken })),
    // POST /v2/users
    'POST /v2/users 201': () =>
      call('/v2/users', {
        token: adminToken,
        body: { email: email('created'), display_name: 'Ada', roles: ['member'], profile: { locale: 'en-GB' } },
        headers: { 'idempotency-key': randomUUID() },
      }),
    'POST /v2/users 400': () => call('/v2/users', { token: adminToken, body: { email: 'nope', display_name: '' } }),
    'POST /v2/users 401': () => call('/v2/users', { body: { email: email('anon'), display_name: 'Anon' } }),
    'POST /v2/users 403': () =>
      call('/v2/users', { token: readOnlyToken, body: { email: email('scope'), display_name: 'Scope' } }),
    'POST /v2/users 409': () =>
      call('/v2/users', { token: adminToken, body: { email: existingEmail.toUpperCase(), display_name: 'Again' } }),
    'POST /v2/users 413': () => call('/v2/users', { token: adminToken, body: hugeBody }),
    'POST /v2/users 415': () =>
      call('/v2/users', { token: adminToken, body: 'email=a@b.co', headers: { 'content-type': 'text/plain' } }),
    'POST /v2/users 422': async () => {
      const key = randomUUID();
      const first = await call('/v2/users', {
        token: adminToken,
        body: { email: email('idem'), display_name: 'First' },
        headers: { 'idempotency-key': key },
      });
      expect(first.status).toBe(201);
      return call('/v2/users', {
        token: adminToken,
        body: { email: email('idem'), display_name: 'Second' },
        headers: { 'idempotency-key': key },
      });
    },
    'POST /v2/users 429': () =>
      exhaust(() => call('/v2/users', { token: throttledToken, body: { email: email('many'), display_name: 'Many' } })),
    // GET /v2/users/me
    'GET /v2/users/me 200': () => call('/v2/users/me', { token: adminToken }),
    'GET /v2/users/me 304': async () => {
      const first = await call('/v2/users/me', { token: adminToken });
      return call('/v2/users/me', { token: adminToken, headers: { 'if-none-match': first.headers.get('etag')! } });
    },
    'GET /v2/users/me 412': () => call('/v2/users/me', { token: adminToken, headers: { 'if-match': '"stale"' } }),
    'GET /v2/users/me 401': () => call('/v2/users/me', { headers: { authorization: 'Bearer not.a.jwt' } }),
    'GET /v2/users/me 403': () => call('/v2/users/me', { token: systemOnlyToken }),
    'GET /v2/users/me 404': () => call('/v2/users/me', { token: clientToken }),
    'GET /v2/users/me 429': () => exhaust(() => call('/v2/users/me', { token: throttledToken })),
    // GET /v2/users/{id}
    'GET /v2/users/{id} 200': () => call(`/v2/users/${org.admin_user_id}`, { token: adminToken }),
    'GET /v2/users/{id} 304': async () => {
      const first = await call(`/v2/users/${org.admin_user_id}`, { token: adminToken });
      return call(`/v2/users/${org.admin_user_id}`, {
        token: adminToken,
        headers: { 'if-none-match': first.headers.get('etag')! },
      });
    },
    'GET /v2/users/{id} 412': () =>
      call(`/v2/users/${org.admin_user_id}`, { token: adminToken, headers: { 'if-match': '"stale"' } }),
    'GET /v2/users/{id} 401': () => call(`/v2/users/${org.admin_user_id}`),
    'GET /v2/users/{id} 403': () => call(`/v2/users/${org.admin_user_id}`, { token: systemOnlyToken }),
    'GET /v2/users/{id} 404': () => call(`/v2/users/${randomUUID()}`, { token: adminToken }),
    'GET /v2/users/{id} 429': () => exhaust(() => call(`/v2/users/${org.admin_user_id}`, { token: throttledToken })),
    // GET /v2/users (contract §7)
    'GET /v2/users 200': () => call('/v2/users?limit=2&q=doc', { token: adminToken }),
    'GET /v2/users 400': () => call('/v2/users?limit=0', { token: adminToken }),
    'GET /v2/users 401': () => call('/v2/users'),
    'GET /v2/users 403': () => call('/v2/users', { token: systemOnlyToken }),
    'GET /v2/users 429': () => exhaust(() => call('/v2/users', { token: throttledToken })),
    // PATCH /v2/users/{id}
    'PATCH /v2/users/{id} 200': async () =>
      call(`/v2/users/${await createUser()}`, {
        method: 'PATCH',
        token: adminToken,
        body: { display_name: 'Patched', phone: '+44 20 7946 0123', profile: { locale: null } },
      }),
    'PATCH /v2/users/{id} 400': async () =>
      call(`/v2/users/${await createUser()}`, { method: 'PATCH', token: adminToken, body: { roles: [] } }),
    'PATCH /v2/users/{id} 401': () => call(`/v2/users/${org.admin_user_id}`, { method: 'PATCH', body: {} }),
    'PATCH /v2/users/{id} 403': () =>
      call(`/v2/users/${org.admin_user_id}`, { method: 'PATCH', token: readOnlyToken, body: {} }),
    'PATCH /v2/users/{id} 404': () =>
      call(`/v2/users/${randomUUID()}`, { method: 'PATCH', token: adminToken, body: {} }),
    'PATCH /v2/users/{id} 409': () =>
      call(`/v2/users/${org.admin_user_id}`, { method: 'PATCH', token: adminToken, body: { roles: ['member'] } }),
    'PATCH /v2/users/{id} 412': async () =>
      call(`/v2/users/${await createUser()}`, {
        method: 'PATCH',
        token: adminToken,
        body: { display_name: 'Stale' },
        headers: { 'if-match': '"not-the-etag"' },
      }),
    'PATCH /v2/users/{id} 413': () =>
      call(`/v2/users/${org.admin_user_id}`, { method: 'PATCH', token: adminToken, body: hugeBody }),
    'PATCH /v2/users/{id} 415': () =>
      call(`/v2/users/${org.admin_user_id}`, {
        method: 'PATCH',
        token: adminToken,
        body: 'display_name=x',
        headers: { 'content-type': 'text/plain' },
      }),
    'PATCH /v2/users/{id} 429': () =>
      exhaust(() => call(`/v2/users/${org.admin_user_id}`, { method: 'PATCH', token: throttledToken, body: {} })),
    // POST /v2/users/{id}/disable, /enable
    'POST /v2/users/{id}/disable 200': async () =>
      call(`/v2/users/${await createUser()}/disable`, { method: 'POST', token: adminToken }),
    'POST /v2/users/{id}/disable 401': () => call(`/v2/users/${org.admin_user_id}/disable`, { method: 'POST' }),
    'POST /v2/users/{id}/disable 403': () =>
      call(`/v2/users/${org.admin_user_id}/disable`, { method: 'POST', token: readOnlyToken }),
    'POST /v2/users/{id}/disable 404': () =>
      call(`/v2/users/${randomUUID()}/disable`, { method: 'POST', token: adminToken }),
    'POST /v2/users/{id}/disable 409': () =>
      call(`/v2/users/${org.admin_user_id}/disable`, { method: 'POST', token: adminToken }),
    'POST /v2/users/{id}/disable 412': async () =>
      call(`/v2/users/${await createUser()}/disable`, {
        method: 'POST',
        token: adminToken,
        headers: { 'if-match': 'W/"weak-never-matches"' },
      }),
    'POST /v2/users/{id}/disable 429': () =>
      exhaust(() => call(`/v2/users/${org.admin_user_id}/disable`, { method: 'POST', token: throttledToken })),
    'POST /v2/users/{id}/enable 200': async () => {
      const id = await createUser();
      expect((await call(`/v2/users/${id}/disable`, { method: 'POST', token: adminToken })).status).toBe(200);
      return call(`/v2/users/${id}/enable`, { method: 'POST', token: adminToken });
    },
    'POST /v2/users/{id}/enable 401': () => call(`/v2/users/${org.admin_user_id}/enable`, { method: 'POST' }),
    'POST /v2/users/{id}/enable 403': () =>
      call(`/v2/users/${org.admin_user_id}/enable`, { method: 'POST', token: readOnlyToken }),
    'POST /v2/users/{id}/enable 404': () =>
      call(`/v2/users/${randomUUID()}/enable`, { method: 'POST', token: adminToken }),
    'POST /v2/users/{id}/enable 412': () =>
      call(`/v2/users/${org.admin_user_id}/enable`, {
        method: 'POST',
        token: adminToken,
        headers: { 'if-match': '"stale"' },
      }),
    'POST /v2/users/{id}/enable 429': () =>
      exhaust(() => call(`/v2/users/${org.admin_user_id}/enable`, { method: 'POST', token: throttledToken })),
    // DELETE /v2/users/{id}
    'DELETE /v2/users/{id} 204': async () =>
      call(`/v2/users/${await createUser()}`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id} 401': () => call(`/v2/users/${org.admin_user_id}`, { method: 'DELETE' }),
    'DELETE /v2/users/{id} 403': () =>
      call(`/v2/users/${org.admin_user_id}`, { method: 'DELETE', token: readOnlyToken }),
    'DELETE /v2/users/{id} 404': () => call(`/v2/users/${randomUUID()}`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id} 409': () => call(`/v2/users/${org.admin_user_id}`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id} 412': async () =>
      call(`/v2/users/${await createUser()}`, { method: 'DELETE', token: adminToken, headers: { 'if-match': '"x"' } }),
    'DELETE /v2/users/{id} 429': () =>
      exhaust(() => call(`/v2/users/${org.admin_user_id}`, { method: 'DELETE', token: throttledToken })),
    // POST /v2/users/me/password
    'POST /v2/users/me/password 200': async () =>
      call('/v2/users/me/password', { token: await oneTimeToken(), body: { password: 'a-new-password-1' } }),
    'POST /v2/users/me/password 400': async () =>
      call('/v2/users/me/password', { token: await oneTimeToken(), body: { password: 'short' } }),
    'POST /v2/users/me/password 401': () =>
      call('/v2/users/me/password', { token: BOGUS_ONE_TIME_TOKEN, body: { password: 'a-new-password-1' } }),
    'POST /v2/users/me/password 413': () =>
      call('/v2/users/me/password', { token: BOGUS_ONE_TIME_TOKEN, body: hugeBody }),
    'POST /v2/users/me/password 415': () =>
      call('/v2/users/me/password', {
        token: BOGUS_ONE_TIME_TOKEN,
        body: 'password=x',
        headers: { 'content-type': 'text/plain' },
      }),
    'POST /v2/users/me/password 429': () => {
      const ip = spentIp();
      return exhaust(() => call('/v2/users/me/password', { ip, body: { password: 'a-new-password-1' } }));
    },
    // POST /v2/users/{id}/reset-password
    'POST /v2/users/{id}/reset-password 200': async () =>
      call(`/v2/users/${await createUser()}/reset-password`, { token: adminToken, body: { send_email: false } }),
    'POST /v2/users/{id}/reset-password 202': async () =>
      call(`/v2/users/${await createUser()}/reset-password`, { token: adminToken, body: {} }),
    'POST /v2/users/{id}/reset-password 400': () =>
      call(`/v2/users/${org.admin_user_id}/reset-password`, { token: adminToken, body: { send_email: 'yes' } }),
    'POST /v2/users/{id}/reset-password 401': () =>
      call(`/v2/users/${org.admin_user_id}/reset-password`, { body: { send_email: false } }),
    'POST /v2/users/{id}/reset-password 403': () =>
      call(`/v2/users/${org.admin_user_id}/reset-password`, { token: readOnlyToken, body: { send_email: false } }),
    'POST /v2/users/{id}/reset-password 404': () =>
      call(`/v2/users/${randomUUID()}/reset-password`, { token: adminToken, body: { send_email: false } }),
    'POST /v2/users/{id}/reset-password 413': () =>
      call(`/v2/users/${org.admin_user_id}/reset-password`, { token: adminToken, body: hugeBody }),
    'POST /v2/users/{id}/reset-password 415': () =>
      call(`/v2/users/${org.admin_user_id}/reset-password`, {
        token: adminToken,
        body: 'send_email=false',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    'POST /v2/users/{id}/reset-password 429': () =>
      exhaust(() => call(`/v2/users/${randomUUID()}/reset-password`, { token: throttledToken, body: {} })),
    // GET /v2/system/rate-limits
    'GET /v2/system/rate-limits 200': () => call('/v2/system/rate-limits', { token: adminToken }),
    'GET /v2/system/rate-limits 401': () => call('/v2/system/rate-limits'),
    'GET /v2/system/rate-limits 403': () => call('/v2/system/rate-limits', { token: readOnlyToken }),
    'GET /v2/system/rate-limits 429': () => exhaust(() => call('/v2/system/rate-limits', { token: throttledToken })),
    // GET /v2/system/quota
    'GET /v2/system/quota 200': () => call('/v2/system/quota?dimension=api', { token: adminToken }),
    'GET /v2/system/quota 400': () => call('/v2/system/quota?dimension=gold', { token: adminToken }),
    'GET /v2/system/quota 401': () => call('/v2/system/quota'),
    'GET /v2/system/quota 403': () => call('/v2/system/quota', { token: readOnlyToken }),
    'GET /v2/system/quota 429': () => exhaust(() => call('/v2/system/quota', { token: throttledToken })),
    // GET /v2/audit/logins, GET /v2/audit/events
    'GET /v2/audit/logins 200': () => call('/v2/audit/logins?outcome=success&limit=5', { token: adminToken }),
    'GET /v2/audit/logins 400': () => call('/v2/audit/logins?limit=101', { token: adminToken }),
    'GET /v2/audit/logins 401': () => call('/v2/audit/logins', { headers: { authorization: 'Bearer not.a.jwt' } }),
    'GET /v2/audit/logins 403': async () => call('/v2/audit/logins', { token: (await activeMember()).token }),
    'GET /v2/audit/logins 429': () => exhaust(() => call('/v2/audit/logins', { token: throttledToken })),
    'GET /v2/audit/events 200': () => call('/v2/audit/events?limit=5', { token: adminToken }),
    'GET /v2/audit/events 400': () => call('/v2/audit/events?cursor=not-a-cursor', { token: adminToken }),
    'GET /v2/audit/events 401': () => call('/v2/audit/events', { headers: { authorization: 'Bearer not.a.jwt' } }),
    'GET /v2/audit/events 403': async () => call('/v2/audit/events', { token: (await activeMember()).token }),
    'GET /v2/audit/events 429': () => exhaust(() => call('/v2/audit/events', { token: throttledToken })),
    // GET and DELETE /v2/users/{id}/sessions, DELETE /v2/users/{id}/sessions/{sessionId}
    'GET /v2/users/{id}/sessions 200': () => call('/v2/users/me/sessions', { token: adminToken }),
    'GET /v2/users/{id}/sessions 401': () =>
      call('/v2/users/me/sessions', { headers: { authorization: 'Bearer not.a.jwt' } }),
    'GET /v2/users/{id}/sessions 403': async () =>
      call(`/v2/users/${org.admin_user_id}/sessions`, { token: (await activeMember()).token }),
    'GET /v2/users/{id}/sessions 404': () => call(`/v2/users/${randomUUID()}/sessions`, { token: adminToken }),
    'GET /v2/users/{id}/sessions 429': () => exhaust(() => call('/v2/users/me/sessions', { token: throttledToken })),
    'DELETE /v2/users/{id}/sessions 204': async () =>
      call('/v2/users/me/sessions', { method: 'DELETE', token: (await activeMember()).token }),
    'DELETE /v2/users/{id}/sessions 401': () =>
      call('/v2/users/me/sessions', { method: 'DELETE', headers: { authorization: 'Bearer not.a.jwt' } }),
    'DELETE /v2/users/{id}/sessions 403': async () =>
      call(`/v2/users/${org.admin_user_id}/sessions`, { method: 'DELETE', token: (await activeMember()).token }),
    'DELETE /v2/users/{id}/sessions 404': () =>
      call(`/v2/users/${randomUUID()}/sessions`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/sessions 429': () =>
      exhaust(() => call('/v2/users/me/sessions', { method: 'DELETE', token: throttledToken })),
    'DELETE /v2/users/{id}/sessions/{sessionId} 204': async () => {
      const { token } = await activeMember();
      const { sid } = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sid: string };
      return call(`/v2/users/me/sessions/${sid}`, { method: 'DELETE', token });
    },
    'DELETE /v2/users/{id}/sessions/{sessionId} 401': () =>
      call(`/v2/users/me/sessions/${randomUUID()}`, {
        method: 'DELETE',
        headers: { authorization: 'Bearer not.a.jwt' },
      }),
    'DELETE /v2/users/{id}/sessions/{sessionId} 403': async () =>
      call(`/v2/users/${org.admin_user_id}/sessions/${randomUUID()}`, {
        method: 'DELETE',
        token: (await activeMember()).token,
      }),
    'DELETE /v2/users/{id}/sessions/{sessionId} 404': () =>
      call(`/v2/users/me/sessions/${randomUUID()}`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/sessions/{sessionId} 429': () =>
      exhaust(() => call(`/v2/users/me/sessions/${randomUUID()}`, { method: 'DELETE', token: throttledToken })),
    // DELETE /v2/users/{id}/lockout, DELETE /v2/users/{id}/mfa, POST /v2/users/me/mfa/recovery-codes (contract §7)
    'DELETE /v2/users/{id}/lockout 204': async () =>
      call(`/v2/users/${await createUser()}/lockout`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/lockout 401': () => call(`/v2/users/${org.admin_user_id}/lockout`, { method: 'DELETE' }),
    'DELETE /v2/users/{id}/lockout 403': () =>
      call(`/v2/users/${org.admin_user_id}/lockout`, { method: 'DELETE', token: readOnlyToken }),
    'DELETE /v2/users/{id}/lockout 404': () =>
      call(`/v2/users/${randomUUID()}/lockout`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/lockout 429': () =>
      exhaust(() => call(`/v2/users/${randomUUID()}/lockout`, { method: 'DELETE', token: throttledToken })),
    'DELETE /v2/users/{id}/mfa 204': async () => {
      const member = await memberWithMfa();
      const { sub } = JSON.parse(Buffer.from(member.token.split('.')[1], 'base64url').toString()) as { sub: string };
      return call(`/v2/users/${sub}/mfa`, { method: 'DELETE', token: adminToken });
    },
    'DELETE /v2/users/{id}/mfa 400': () =>
      call('/v2/users/me/mfa', { method: 'DELETE', token: adminToken, body: { extra: 1 } }),
    'DELETE /v2/users/{id}/mfa 401': () => call('/v2/users/me/mfa', { method: 'DELETE', body: {} }),
    'DELETE /v2/users/{id}/mfa 403': () =>
      call(`/v2/users/${org.admin_user_id}/mfa`, { method: 'DELETE', token: systemOnlyToken }),
    'DELETE /v2/users/{id}/mfa 404': () =>
      call(`/v2/users/${randomUUID()}/mfa`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/mfa 413': () =>
      call('/v2/users/me/mfa', { method: 'DELETE', token: adminToken, body: hugeBody }),
    'DELETE /v2/users/{id}/mfa 415': () =>
      call('/v2/users/me/mfa', {
        method: 'DELETE',
        token: adminToken,
        body: 'password=x',
        headers: { 'content-type': 'text/plain' },
      }),
    'DELETE /v2/users/{id}/mfa 429': () =>
      exhaust(() => call(`/v2/users/${randomUUID()}/mfa`, { method: 'DELETE', token: throttledToken })),
    'POST /v2/users/me/mfa/recovery-codes 201': async () =>
      call('/v2/users/me/mfa/recovery-codes', {
        token: (await memberWithMfa()).token,
        body: { password: 'member-password-1' },
      }),
    'POST /v2/users/me/mfa/recovery-codes 400': () =>
      call('/v2/users/me/mfa/recovery-codes', { token: adminToken, body: { password: '' } }),
    'POST /v2/users/me/mfa/recovery-codes 401': () =>
      call('/v2/users/me/mfa/recovery-codes', { body: { password: 'x' } }),
    'POST /v2/users/me/mfa/recovery-codes 403': () =>
      call('/v2/users/me/mfa/recovery-codes', { token: systemOnlyToken, body: { password: 'x' } }),
    'POST /v2/users/me/mfa/recovery-codes 409': async () =>
      call('/v2/users/me/mfa/recovery-codes', {
        token: (await activeMember()).token,
        body: { password: 'member-password-1' },
      }),
    'POST /v2/users/me/mfa/recovery-codes 413': () =>
      call('/v2/users/me/mfa/recovery-codes', { token: adminToken, body: hugeBody }),
    'POST /v2/users/me/mfa/recovery-codes 415': () =>
      call('/v2/users/me/mfa/recovery-codes', {
        token: adminToken,
        body: 'x',
        headers: { 'content-type': 'text/plain' },
      }),
    'POST /v2/users/me/mfa/recovery-codes 429': () =>
      exhaust(() => call('/v2/users/me/mfa/recovery-codes', { token: throttledToken, body: { password: 'x' } })),
    // POST /v2/users/me/mfa/totp and /confirm
    'POST /v2/users/me/mfa/totp 201': async () =>
      call('/v2/users/me/mfa/totp', { token: (await activeMember()).token, body: { password: 'member-password-1' } }),
    'POST /v2/users/me/mfa/totp 400': () => call('/v2/users/me/mfa/totp', { token: adminToken, body: { extra: 1 } }),
    'POST /v2/users/me/mfa/totp 409': async () =>
      call('/v2/users/me/mfa/totp', { token: (await memberWithMfa()).token, body: { password: 'member-password-1' } }),
    'POST /v2/users/me/mfa/totp 413': () => call('/v2/users/me/mfa/totp', { token: adminToken, body: hugeBody }),
    'POST /v2/users/me/mfa/totp 415': () =>
      call('/v2/users/me/mfa/totp', { token: adminToken, body: 'x', headers: { 'content-type': 'text/plain' } }),
    'POST /v2/users/me/mfa/totp 401': () => call('/v2/users/me/mfa/totp', { body: {} }),
    'POST /v2/users/me/mfa/totp 403': () => call('/v2/users/me/mfa/totp', { token: systemOnlyToken, body: {} }),
    'POST /v2/users/me/mfa/totp 429': () =>
      exhaust(() => call('/v2/users/me/mfa/totp', { token: throttledToken, body: {} })),
    'POST /v2/users/me/mfa/totp/confirm 200': async () => (await memberWithMfa()).confirmed,
    'POST /v2/users/me/mfa/totp/confirm 400': () =>
      call('/v2/users/me/mfa/totp/confirm', { token: adminToken, body: { code: 'abc' } }),
    'POST /v2/users/me/mfa/totp/confirm 409': async () =>
      call('/v2/users/me/mfa/totp/confirm', { token: (await activeMember()).token, body: { code: '123456' } }),
    'POST /v2/users/me/mfa/totp/confirm 413': () =>
      call('/v2/users/me/mfa/totp/confirm', { token: adminToken, body: hugeBody }),
    'POST /v2/users/me/mfa/totp/confirm 415': () =>
      call('/v2/users/me/mfa/totp/confirm', {
        token: adminToken,
        body: 'x',
        headers: { 'content-type': 'text/plain' },
      }),
    'POST /v2/users/me/mfa/totp/confirm 401': () => call('/v2/users/me/mfa/totp/confirm', { body: { code: '123456' } }),
    'POST /v2/users/me/mfa/totp/confirm 403': () =>
      call('/v2/users/me/mfa/totp/confirm', { token: systemOnlyToken, body: { code: '123456' } }),
    'POST /v2/users/me/mfa/totp/confirm 429': () =>
      exhaust(() => call('/v2/users/me/mfa/totp/confirm', { token: throttledToken, body: { code: '123456' } })),
    // Every operation but the token endpoint (whose parameters auth judges) refuses a control character in
    // a path parameter or the query (400 validation_failed, README "Hostile input"), these too.
    'GET /v2/system/health 400': () => call('/v2/system/health?probe=%00'),
    'GET /v2/auth/jwks 400': () => call('/v2/auth/jwks?kid=%01'),
    'GET /.well-known/oauth-authorization-server 400': () => call('/.well-known/oauth-authorization-server?x=%1b'),
    'GET /v2/system/rate-limits 400': () => call('/v2/system/rate-limits?group=%00', { token: adminToken }),
    'GET /v2/users/me 400': () => call('/v2/users/me?x=%7f', { token: adminToken }),
    'GET /v2/users/{id} 400': () => call('/v2/users/ab%00cd', { token: adminToken }),
    'DELETE /v2/users/{id} 400': () => call('/v2/users/ab%00cd', { method: 'DELETE', token: adminToken }),
    'POST /v2/users/{id}/disable 400': () => call('/v2/users/ab%00cd/disable', { method: 'POST', token: adminToken }),
    'POST /v2/users/{id}/enable 400': () => call('/v2/users/ab%00cd/enable', { method: 'POST', token: adminToken }),
    'GET /v2/users/{id}/sessions 400': () => call('/v2/users/ab%00cd/sessions', { token: adminToken }),
    'DELETE /v2/users/{id}/sessions 400': () =>
      call('/v2/users/ab%00cd/sessions', { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/sessions/{sessionId} 400': () =>
      call('/v2/users/me/sessions/ab%00cd', { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/lockout 400': () =>
      call('/v2/users/ab%00cd/lockout', { method: 'DELETE', token: adminToken }),
    // An operation that takes no body still has one parsed when a request sends it: too large, or of a
    // media type the gateway reads none of.
    ...(Object.fromEntries(
      [
        ['POST', '/v2/users/{id}/disable', `/v2/users/${randomUUID()}/disable`],
        ['POST', '/v2/users/{id}/enable', `/v2/users/${randomUUID()}/enable`],
        ['DELETE', '/v2/users/{id}', `/v2/users/${randomUUID()}`],
        ['DELETE', '/v2/users/{id}/sessions', `/v2/users/${randomUUID()}/sessions`],
        ['DELETE', '/v2/users/{id}/sessions/{sessionId}', `/v2/users/me/sessions/${randomUUID()}`],
        ['DELETE', '/v2/users/{id}/lockout', `/v2/users/${randomUUID()}/lockout`],
      ].flatMap(([method, path, target]) => [
        [`${method} ${path} 413`, () => call(target, { method, token: adminToken, body: hugeBody })],
        [
          `${method} ${path} 415`,
          () => call(target, { method, token: adminToken, body: 'x', headers: { 'content-type': 'text/plain' } }),
        ],
      ]),
    ) as Record<string, () => Promise<Response>>),
  };

  /** With identity, auth and platform stopped (the gateway still verifies tokens with the keys it has). */
  /**
   * Further real answers of statuses already exercised above, keyed `<METHOD> <path> <status> <what>`:
   * one scenario per status cannot show that a header or member the document requires is only sent in
   * some of that status's answers.
   */
  const variantScenarios: Record<string, () => Promise<Response>> = {
    // X-Device-Token is a password login's device credential: no other grant gets one.
    'POST /v2/auth/token 200 client_credentials': () =>
      call('/v2/auth/token', {
        body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret! },
      }),
    // The stored answer to a repeated Idempotency-Key.
    'POST /v2/users 201 replayed': async () => {
      const request = {
        token: adminToken,
        headers: { 'idempotency-key': `openapi-${randomUUID()}` },
        body: { email: email('replayed'), display_name: 'Replayed', send_activation: false },
      };
      const first = await call('/v2/users', request);
      expect(first.status).toBe(201);
      await first.arrayBuffer();
      return call('/v2/users', request);
    },
    'POST /v2/auth/introspect 200 refresh token': async () => {
      const issued = await call('/v2/auth/token', {
        body: { grant_type: 'password', username: 'admin@openapi.test', password: ADMIN_PASSWORD },
      });
      const { refresh_token } = (await issued.json()) as { refresh_token: string };
      return call('/v2/auth/introspect', {
        body: { token: refresh_token, client_id: org.client_id, client_secret: org.client_secret! },
      });
    },
    'POST /v2/auth/introspect 200 client token': () =>
      call('/v2/auth/introspect', {
        body: { token: clientToken, client_id: org.client_id, client_secret: org.client_secret! },
      }),
    'POST /v2/auth/introspect 200 inactive': () =>
      call('/v2/auth/introspect', {
        body: { token: 'not-a-token', client_id: org.client_id, client_secret: org.client_secret! },
      }),
    // Every entry the scenarios above left, of every kind.
    'GET /v2/audit/logins 200 all': async () => {
      for (const body of [
        { grant_type: 'password', username: 'nobody@openapi.test', password: 'wrong-1' },
        { grant_type: 'client_credentials', client_id: org.client_id, client_secret: 'wrong' },
        { grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: org.client_id },
      ]) {
        await (await call('/v2/auth/token', { body })).arrayBuffer();
      }
      return call('/v2/audit/logins?limit=100', { token: adminToken });
    },
    'GET /v2/audit/events 200 all': () => call('/v2/audit/events?limit=100', { token: adminToken }),
    'GET /v2/users 200 all': () => call('/v2/users?limit=100', { token: adminToken }),
  };

  const outageScenarios: Record<string, () => Promise<Response>> = {
    'POST /v2/auth/token 503': () =>
      call('/v2/auth/token', {
        body: { grant_type: 'password', username: 'admin@openapi.test', password: ADMIN_PASSWORD },
      }),
    'GET /v2/auth/jwks 503': () => call('/v2/auth/jwks'),
    'POST /v2/auth/revoke 503': () => call('/v2/auth/revoke', { body: { token: 'x', client_id: browserClient } }),
    'POST /v2/auth/introspect 503': () =>
      call('/v2/auth/introspect', {
        body: { token: 'x', client_id: org.client_id, client_secret: org.client_secret! },
      }),
    'GET /v2/auth/authorize 503': () => call(`/v2/auth/authorize?${authorizeQuery()}`),
    'POST /v2/auth/authorize 503': () =>
      submitLogin(formBeforeOutage, { username: 'admin@openapi.test', password: ADMIN_PASSWORD }),
    'GET /v2/system/health 503': () => call('/v2/system/health'),
    'POST /v2/users 503': () =>
      call('/v2/users', { token: adminToken, body: { email: email('outage'), display_name: 'Outage' } }),
    'GET /v2/users/me 503': () => call('/v2/users/me', { token: adminToken }),
    'GET /v2/users/{id} 503': () => call(`/v2/users/${org.admin_user_id}`, { token: adminToken }),
    'GET /v2/users 503': () => call('/v2/users', { token: adminToken }),
    'PATCH /v2/users/{id} 503': () =>
      call(`/v2/users/${org.admin_user_id}`, { method: 'PATCH', token: adminToken, body: {} }),
    'POST /v2/users/{id}/disable 503': () =>
      call(`/v2/users/${org.admin_user_id}/disable`, { method: 'POST', token: adminToken }),
    'POST /v2/users/{id}/enable 503': () =>
      call(`/v2/users/${org.admin_user_id}/enable`, { method: 'POST', token: adminToken }),
    'DELETE /v2/users/{id} 503': () => call(`/v2/users/${org.admin_user_id}`, { method: 'DELETE', token: adminToken }),
    'POST /v2/users/me/password 503': () =>
      call('/v2/users/me/password', { token: BOGUS_ONE_TIME_TOKEN, body: { password: 'a-new-password-1' } }),
    'POST /v2/users/{id}/reset-password 503': () =>
      call(`/v2/users/${org.admin_user_id}/reset-password`, { token: adminToken, body: { send_email: false } }),
    'GET /v2/system/quota 503': () => call('/v2/system/quota', { token: adminToken }),
    // A token naming a key the gateway has not read (auth's newest, after a rotation) needs auth's key set.
    'GET /v2/system/rate-limits 503': async () => {
      const [, payload] = adminToken.split('.');
      const { privateKey } = await generateKeyPair('ES256');
      const token = await new SignJWT(JSON.parse(Buffer.from(payload, 'base64url').toString()) as Json)
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'a-key-not-read-yet' })
        .sign(privateKey);
      return call('/v2/system/rate-limits', { token });
    },
    'GET /v2/users/{id}/sessions 503': () => call('/v2/users/me/sessions', { token: adminToken }),
    'GET /v2/audit/logins 503': () => call('/v2/audit/logins', { token: adminToken }),
    'GET /v2/audit/events 503': () => call('/v2/audit/events', { token: adminToken }),
    'DELETE /v2/users/{id}/sessions 503': () =>
      call(`/v2/users/${org.admin_user_id}/sessions`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/sessions/{sessionId} 503': () =>
      call(`/v2/users/me/sessions/${randomUUID()}`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/lockout 503': () =>
      call(`/v2/users/${org.admin_user_id}/lockout`, { method: 'DELETE', token: adminToken }),
    'DELETE /v2/users/{id}/mfa 503': () =>
      call(`/v2/users/${org.admin_user_id}/mfa`, { method: 'DELETE', token: adminToken }),
    'POST /v2/users/me/mfa/recovery-codes 503': () =>
      call('/v2/users/me/mfa/recovery-codes', { token: adminToken, body: { password: ADMIN_PASSWORD } }),
    'POST /v2/users/me/mfa/totp 503': () =>
      call('/v2/users/me/mfa/totp', { token: adminToken, body: { password: ADMIN_PASSWORD } }),
    'POST /v2/users/me/mfa/totp/confirm 503': () =>
      call('/v2/users/me/mfa/totp/confirm', { token: adminToken, body: { code: '123456' } }),
  };

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    org = bootstrapOrg(stack, 'openapi', 'admin@openapi.test', ADMIN_PASSWORD);
    const throttled = bootstrapOrg(stack, 'throttled', 'admin@throttled.test', ADMIN_PASSWORD);
    for (const group of ['users.write', 'users.read']) raiseLimit(stack, org.org_id, group);
    for (const group of ['users.write', 'users.read', 'system.read', 'system.health', 'default']) {
      setRateLimit(stack, throttled.org_id, group, { ratePerMinute: 60, burst: 1 });
    }

    const response = await fetch(stack.url('/v2/openapi.json'));
    expect(response.status).toBe(200);
    document = (await response.json()) as OpenApiDocument;
    ajv.addSchema(document, 'openapi.json');

    adminToken = await passwordGrant();
    readOnlyToken = await passwordGrant('users:read');
    systemOnlyToken = await passwordGrant('system:read');
    const client = await call('/v2/auth/token', {
      body: {
        grant_type: 'client_credentials',
        client_id: throttled.client_id,
        client_secret: throttled.client_secret!,
      },
    });
    expect(client.status).toBe(200);
    throttledToken = ((await client.json()) as { access_token: string }).access_token;
    const ownClient = await call('/v2/auth/token', {
      body: { grant_type: 'client_credentials', client_id: org.client_id, client_secret: org.client_secret! },
    });
    expect(ownClient.status).toBe(200);
    clientToken = ((await ownClient.json()) as { access_token: string }).access_token;
    browserClient = stack.cli<{ client_id: string }>(
      ...['create-client', '--org-id', org.org_id, '--name', 'Browser app', '--type', 'public'],
      ...['--grant-types', 'authorization_code', '--redirect-uris', REDIRECT_URI, '--scopes', 'users:read'],
    ).client_id;
    formBeforeOutage = await loginForm();
    existingEmail = email('existing');
    const existing = await call('/v2/users', {
      token: adminToken,
      body: { email: existingEmail, display_name: 'Taken' },
    });
    expect(existing.status).toBe(201);
  }, 300_000);

  afterAll(async () => {
    await stack?.close();
  });

  /** Checks one real response against the document's answer for `<METHOD> <path> <status>`. */
  async function expectDocumented(key: string, response: Response) {
    const [method, path, status] = key.split(' ') as [string, string, string];
    expect(response.status).toBe(Number(status));
    const operation = document.paths[path]?.[method.toLowerCase()];
    expect(operation).toBeDefined();
    const documented = operation.responses[status];
    expect(documented).toBeDefined();

    for (const [name, declared] of Object.entries(documented.headers ?? {})) {
      const header = (declared.$ref ? document.components.headers[name] : declared) as {
        required?: boolean;
        schema: Json;
      };
      const value = response.headers.get(name);
      if (header.required) expect({ header: name, present: value !== null }).toEqual({ header: name, present: true });
      if (value === null) continue;
      const typed = header.schema.type === 'integer' || header.schema.type === 'number' ? Number(value) : value;
      const validate = ajv.compile(header.schema);
      expect({ header: name, value, errors: validate(typed) ? null : validate.errors }).toEqual({
        header: name,
        value,
        errors: null,
      });
    }

    const text = await response.text();
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0].trim();
    const content = documented.content ?? {};
    if (Object.keys(content).length === 0) {
      expect(text).toBe('');
      return;
    }
    expect(Object.keys(content)).toContain(mediaType);
    if (mediaType === 'text/html') {
      expect(text).toMatch(/^<!doctype html>/);
      return;
    }
    const validate = ajv.compile({
      $ref: `openapi.json#/${pointer('paths', path, method.toLowerCase(), 'responses', status, 'content', mediaType, 'schema')}`,
    });
    const body = JSON.parse(text) as unknown;
    expect({ key, body, errors: validate(body) ? null : validate.errors }).toEqual({ key, body, errors: null });
  }

  it('serves an OpenAPI 3.1 document of the /v2 API, publicly and cacheably', async () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    const response = await fetch(stack.url('/v2/openapi.json'));
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    const etag = response.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(stack.url('/v2/openapi.json'), { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    // RFC 9110 §13.1.2: a list of tags, compared weakly (a proxy that compresses sends `W/"…"` back), or `*`.
    for (const condition of [`W/${etag!}`, `"other", ${etag!}`, '*']) {
      const conditional = await fetch(stack.url('/v2/openapi.json'), { headers: { 'if-none-match': condition } });
      expect({ condition, status: conditional.status }).toEqual({ condition, status: 304 });
    }
    const changed = await fetch(stack.url('/v2/openapi.json'), { headers: { 'if-none-match': '"other"' } });
    expect(changed.status).toBe(200);
    // Not a hole in the rate limits: counted like any other path.
    expect(response.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });

  it('exercises every documented operation and status, and documents every exercised one', () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).flatMap((method) =>
        Object.keys(item[method].responses).map((status) => `${method.toUpperCase()} ${path} ${status}`),
      ),
    );
    const exercised = [...Object.keys(scenarios), ...Object.keys(outageScenarios)];
    expect({ notExercised: documented.filter((key) => !exercised.includes(key)) }).toEqual({ notExercised: [] });
    expect({ notDocumented: exercised.filter((key) => !documented.includes(key)) }).toEqual({ notDocumented: [] });
  });

  it.each(Object.keys(scenarios))('%s answers as documented', async (key) => {
    await expectDocumented(key, await scenarios[key]());
  });

  it.each(Object.keys(variantScenarios))('%s answers as documented', async (key) => {
    await expectDocumented(key, await variantScenarios[key]());
  });

  describe('with the backend services down', () => {
    beforeAll(async () => {
      await Promise.all((['identity', 'auth', 'platform'] as const).map((app) => stack.stopApp(app)));
    });

    it.each(Object.keys(outageScenarios))('%s answers as documented', async (key) => {
      await expectDocumented(key, await outageScenarios[key]());
    });
  });

  describe('GET /docs', () => {
    it('serves Swagger UI whose own assets load, from this server only', async () => {
      const page = await fetch(stack.url('/docs'));
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      const html = await page.text();
      expect(html).toContain('id="swagger-ui"');
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
      expect(assets.length).toBeGreaterThanOrEqual(4);
      for (const asset of assets) {
        // Relative to the page (so it works behind a proxy's prefix): same origin, nothing from a CDN.
        expect(asset).toMatch(/^docs\//);
        const response = await fetch(new URL(asset, stack.url('/docs')));
        expect({ asset, status: response.status }).toEqual({ asset, status: 200 });
        expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
      }
      const init = await (await fetch(stack.url('/docs/swagger-ui-init.js'))).text();
      expect(init).toContain("url: 'v2/openapi.json'");
      const bundle = await fetch(stack.url('/docs/swagger-ui-bundle.js'));
      expect(bundle.headers.get('content-type')).toMatch(/^application\/javascript/);
      expect(await bundle.text()).toContain('SwaggerUIBundle');
    });

    it('keeps problem+json for other methods and unknown files', async () => {
      const post = await fetch(stack.url('/v2/openapi.json'), { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      const missing = await fetch(stack.url('/docs/nothing-here.js'));
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { code: string }).code).toBe('not_found');
    });
  });
});
