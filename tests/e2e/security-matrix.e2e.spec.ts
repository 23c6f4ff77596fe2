import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { freePort, repositoryRoot, request, TestStack, waitFor } from '@acct/testing';
import { generateKeyPair, SignJWT } from 'jose';

interface Bootstrap {
  org_id: string;
  admin_user_id: string;
  client_id: string;
  client_secret: string | null;
}
interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  request_id: string;
}
interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const ADMIN_SCOPES = ['users:read', 'users:write', 'system:read', 'instances:write'];
const PASSWORD = 'matrix-admin-pass-1';

/** A protected endpoint, with what its owner (org A) may send to it and what a request for it needs. */
interface Endpoint {
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: (org: Bootstrap) => string;
  scope: string;
  body?: (org: Bootstrap) => unknown;
  /** The owner's own admin: anything but 401/403 proves the token was accepted (the control). */
  control: number;
  /**
   * What org B's admin and client get when they aim this endpoint at org A's ids (contract §1: no
   * existence oracle); for `me` routes, the caller itself (a client is no user: 404 / 403).
   */
  crossOrg: { statuses: number[]; code?: string };
}

let sequence = 0;
const freshEmail = (label: string) => `${label}-${Date.now()}-${(sequence += 1)}@matrix.test`;

/** Every public route that takes an access token (interface §4, contract §3). */
const ENDPOINTS: Endpoint[] = [
  {
    name: 'POST /v2/users',
    method: 'POST',
    path: () => '/v2/users',
    scope: 'users:write',
    body: (org) => ({ email: freshEmail('new'), display_name: 'New', org_id: org.org_id }),
    control: 201,
    crossOrg: { statuses: [403], code: 'forbidden' },
  },
  {
    name: 'GET /v2/users/{id}',
    method: 'GET',
    path: (org) => `/v2/users/${org.admin_user_id}`,
    scope: 'users:read',
    control: 200,
    crossOrg: { statuses: [404], code: 'not_found' },
  },
  {
    name: 'POST /v2/users/{id}/reset-password',
    method: 'POST',
    path: (org) => `/v2/users/${org.admin_user_id}/reset-password`,
    scope: 'users:write',
    body: () => ({ send_email: false }),
    control: 200,
    crossOrg: { statuses: [404], code: 'not_found' },
  },
  {
    name: 'GET /v2/users/me',
    method: 'GET',
    path: () => '/v2/users/me',
    scope: 'users:read',
    control: 200,
    // "me" is always the caller: org B's admin sees itself, org B's client is no user.
    crossOrg: { statuses: [200, 404] },
  },
  {
    name: 'GET /v2/system/rate-limits',
    method: 'GET',
    path: () => '/v2/system/rate-limits',
    scope: 'system:read',
    control: 200,
    crossOrg: { statuses: [200] },
  },
  {
    name: 'GET /v2/system/quota',
    method: 'GET',
    path: () => '/v2/system/quota',
    scope: 'system:read',
    control: 200,
    crossOrg: { statuses: [200] },
  },
  {
    name: 'POST /v2/users/me/mfa/totp',
    method: 'POST',
    path: () => '/v2/users/me/mfa/totp',
    scope: 'users:read',
    body: () => ({ password: PASSWORD }),
    control: 201,
    // Enrols the caller itself; a client is no user.
    crossOrg: { statuses: [201, 403] },
  },
  {
    name: 'POST /v2/users/me/mfa/totp/confirm',
    method: 'POST',
    path: () => '/v2/users/me/mfa/totp/confirm',
    scope: 'users:read',
    body: () => ({ code: '000000' }),
    // A wrong code for the caller's own enrolment: the request got past authentication.
    control: 400,
    crossOrg: { statuses: [400, 403, 409] },
  },
  {
    name: 'GET /v2/users/{id}/sessions',
    method: 'GET',
    path: (org) => `/v2/users/${org.admin_user_id}/sessions`,
    scope: 'users:read',
    control: 200,
    // Another org's admin (a user or an admin client): no such user.
    crossOrg: { statuses: [404, 403] },
  },
  {
    name: 'GET /v2/audit/logins',
    method: 'GET',
    path: () => '/v2/audit/logins',
    scope: 'users:read',
    control: 200,
    // Another org's admin reads its own org's audit, never this one's.
    crossOrg: { statuses: [200] },
  },
  {
    name: 'GET /v2/audit/events',
    method: 'GET',
    path: () => '/v2/audit/events',
    scope: 'users:read',
    control: 200,
    crossOrg: { statuses: [200] },
  },
  {
    name: 'DELETE /v2/users/{id}/lockout',
    method: 'DELETE',
    path: (org) => `/v2/users/${org.admin_user_id}/lockout`,
    scope: 'users:write',
    control: 204,
    crossOrg: { statuses: [404], code: 'not_found' },
  },
  {
    name: 'DELETE /v2/users/{id}/mfa',
    method: 'DELETE',
    path: (org) => `/v2/users/${org.admin_user_id}/mfa`,
    scope: 'users:read',
    // The owner's admin removing its own (off) MFA proves its password.
    body: () => ({ password: PASSWORD }),
    control: 204,
    crossOrg: { statuses: [404], code: 'not_found' },
  },
  {
    name: 'POST /v2/users/me/mfa/recovery-codes',
    method: 'POST',
    path: () => '/v2/users/me/mfa/recovery-codes',
    scope: 'users:read',
    body: () => ({ password: PASSWORD }),
    // The caller's own: its MFA is off (409); a client is no user (403).
    control: 409,
    crossOrg: { statuses: [409, 403] },
  },
];

/**
 * Issue 6 item 3: every protected endpoint × (no token, expired, forged, wrong scope, another org's
 * ids) answers 401 / 403 / 404 as contract §1 says, and never with another org's data.
 */
describe('security matrix', () => {
  let stack: TestStack;
  let orgA: Bootstrap;
  let orgB: Bootstrap;
  let adminA: string;
  let adminB: string;
  const extras: ChildProcess[] = [];

  // Every token request from its own address: the auth tier's per-IP bucket must not interfere.
  let address = 0;
  const clientIp = () => `198.51.100.${(address = (address % 250) + 1)}`;

  async function token(body: Record<string, string>, base = stack.url('')): Promise<string> {
    const answer = await request<{ access_token: string }>(`${base}/v2/auth/token`, {
      body,
      headers: { 'x-forwarded-for': clientIp() },
    });
    expect(answer.status).toBe(200);
    return answer.body.access_token;
  }
  const clientToken = (org: Bootstrap, scope?: string, base?: string) =>
    token(
      {
        grant_type: 'client_credentials',
        client_id: org.client_id,
        client_secret: org.client_secret!,
        ...(scope === undefined ? {} : { scope }),
      },
      base,
    );

  async function call(endpoint: Endpoint, org: Bootstrap, authorization?: string): Promise<Answer> {
    const body = endpoint.body?.(org);
    // Each call from its own address: unauthenticated calls are counted per IP (contract §2).
    const headers: Record<string, string> = { 'x-forwarded-for': clientIp() };
    if (authorization !== undefined) headers.authorization = authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(stack.url(endpoint.path(org)), {
      method: endpoint.method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  function expectProblem(answer: Answer, status: number, code: string): Problem {
    expect({ status: answer.status, body: answer.text }).toMatchObject({ status });
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(answer.text) as Problem;
    expect(problem).toMatchObject({ status, code, type: expect.stringMatching(/^urn:/) });
    return problem;
  }

  /** Contract §1: no, malformed, expired or badly signed token alike: `Bearer … error="invalid_token"`. */
  function expectUnauthenticated(answer: Answer) {
    expectProblem(answer, 401, 'unauthenticated');
    const challenge = answer.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer( |$)/);
    expect(challenge).toContain('error="invalid_token"');
  }

  /** Nothing identifying org A in an answer given to anyone else. */
  function expectNothingOf(org: Bootstrap, answer: Answer, adminEmail: string) {
    for (const secret of [org.org_id, org.client_id, adminEmail]) {
      expect(answer.text.toLowerCase()).not.toContain(secret.toLowerCase());
    }
  }

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    orgA = stack.cli<Bootstrap>('bootstrap', '--org', 'alpha', '--email', 'admin@alpha.test', '--password', PASSWORD);
    orgB = stack.cli<Bootstrap>('bootstrap', '--org', 'beta', '--email', 'admin@beta.test', '--password', PASSWORD);
    const password = (username: string) => token({ grant_type: 'password', username, password: PASSWORD });
    adminA = await password('admin@alpha.test');
    adminB = await password('admin@beta.test');
  });

  afterAll(async () => {
    for (const extra of extras) extra.kill('SIGKILL');
    await stack?.close();
  });

  describe.each(ENDPOINTS)('$name', (endpoint) => {
    it("lets the owner's own admin token through (the control)", async () => {
      const answer = await call(endpoint, orgA, `Bearer ${adminA}`);
      expect({ status: answer.status, body: answer.text }).toMatchObject({ status: endpoint.control });
    });

    it('answers no token with 401 and the invalid_token challenge (contract §1)', async () => {
      expectUnauthenticated(await call(endpoint, orgA));
    });

    it.each([
      ['an empty bearer', 'Bearer '],
      ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
      ['garbage', 'Bearer not-a-jwt'],
      ['a JWT-shaped garbage', 'Bearer aaa.bbb.ccc'],
    ])('answers %s with 401 invalid_token', async (_label, authorization) => {
      const answer = await call(endpoint, orgA, authorization);
      expectUnauthenticated(answer);
    });

    it('answers forged tokens (alg none, wrong key, tampered payload) with 401 invalid_token', async () => {
      for (const forged of await forgeries(adminA, orgB)) {
        const answer = await call(endpoint, orgA, `Bearer ${forged}`);
        expectUnauthenticated(answer);
        expectNothingOf(orgA, { ...answer, text: answer.text.replace(orgA.admin_user_id, '') }, 'admin@alpha.test');
      }
    });

    it('answers a token without the scope with 403 insufficient_scope naming the scope', async () => {
      const narrow = await clientToken(orgA, ADMIN_SCOPES.filter((scope) => scope !== endpoint.scope).join(' '));
      const answer = await call(endpoint, orgA, `Bearer ${narrow}`);
      expectProblem(answer, 403, 'insufficient_scope');
      expect(answer.headers.get('www-authenticate')).toContain(`error="insufficient_scope", scope="${endpoint.scope}"`);
    });

    it("answers another org's token aimed at this org's ids without this org's data", async () => {
      for (const other of [adminB, await clientToken(orgB)]) {
        const answer = await call(endpoint, orgA, `Bearer ${other}`);
        expect(endpoint.crossOrg.statuses).toContain(answer.status);
        if (endpoint.crossOrg.code) expectProblem(answer, answer.status, endpoint.crossOrg.code);
        // The only thing of org A an answer may hold is the id the caller itself sent in the path.
        expectNothingOf(orgA, { ...answer, text: answer.text.replace(orgA.admin_user_id, '') }, 'admin@alpha.test');
      }
    });
  });

  it("shows org B its own org in quota and users/me, never org A's", async () => {
    const quota = await request<{ org_id: string }>(stack.url('/v2/system/quota'), { token: adminB });
    expect(quota.body.org_id).toBe(orgB.org_id);
    const me = await request<{ id: string; email: string }>(stack.url('/v2/users/me'), { token: adminB });
    expect(me.body).toMatchObject({ id: orgB.admin_user_id, email: 'admin@beta.test' });
  });

  it('answers the one-time password route without its one-time token with 401', async () => {
    for (const authorization of [undefined, `Bearer ${adminA}`, 'Bearer x', `Bearer ${'a'.repeat(43)}`]) {
      const response = await fetch(stack.url('/v2/users/me/password'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': clientIp(),
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: JSON.stringify({ password: 'new-password-1' }),
      });
      const answer = { status: response.status, headers: response.headers, text: await response.text() };
      expectProblem(answer, 401, 'unauthenticated');
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
  });

  describe('an expired, validly signed token', () => {
    /**
     * A second auth service and gateway on the same databases, keys and issuer, issuing tokens that
     * live 1 s: the main gateway must refuse them once they expire (beyond the verifier's 5 s leeway).
     */
    async function startShortLivedIssuer(): Promise<string> {
      const [grpc, authOps, http, gatewayOps] = [
        await freePort(),
        await freePort(),
        await freePort(),
        await freePort(),
      ];
      const env = {
        ...process.env,
        ...stack.env,
        ACCESS_TOKEN_TTL_SECONDS: '1',
        AUTH_GRPC_PORT: String(grpc),
        AUTH_OPS_PORT: String(authOps),
        AUTH_GRPC_ADDR: `127.0.0.1:${grpc}`,
        GATEWAY_PORT: String(http),
        GATEWAY_OPS_PORT: String(gatewayOps),
      };
      for (const [app, ops] of [
        ['auth', authOps],
        ['gateway', gatewayOps],
      ] as const) {
        const log = fs.openSync(
          path.join(repositoryRoot, '.data', 'test-logs', `${stack.ports.http}-short-${app}.log`),
          'a',
        );
        const child = spawn(
          process.execPath,
          ['-r', path.join(repositoryRoot, 'tools/run-ts.cjs'), path.join(repositoryRoot, `apps/${app}/src/main.ts`)],
          { cwd: repositoryRoot, env, stdio: ['ignore', log, log] },
        );
        fs.closeSync(log);
        extras.push(child);
        const exited = new Promise<never>((_, reject) =>
          child.once('exit', (code) => reject(new Error(`short-lived ${app} exited with ${code}`))),
        );
        await Promise.race([
          exited,
          waitFor(`short-lived ${app}`, async () =>
            (await fetch(`http://127.0.0.1:${ops}/livez`).catch(() => undefined))?.ok ? true : undefined,
          ),
        ]);
        exited.catch(() => undefined);
      }
      return `http://127.0.0.1:${http}`;
    }

    it('is refused with 401 invalid_token on every protected endpoint', async () => {
      const base = await startShortLivedIssuer();
      const expired = await clientToken(orgA, undefined, base);
      const { exp } = JSON.parse(Buffer.from(expired.split('.')[1], 'base64url').toString()) as { exp: number };
      // Issued by the real keys: the JWKS of the main gateway lists the token's key.
      const jwks = await request<{ keys: Array<{ kid: string }> }>(stack.url('/v2/auth/jwks'));
      const kid = (JSON.parse(Buffer.from(expired.split('.')[0], 'base64url').toString()) as { kid: string }).kid;
      expect(jwks.body.keys.map((key) => key.kid)).toContain(kid);
      // Past its expiry and the 5 s clock leeway.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, (exp + 6) * 1000 - Date.now())));
      for (const endpoint of ENDPOINTS) {
        expectUnauthenticated(await call(endpoint, orgA, `Bearer ${expired}`));
      }
    }, 90_000);
  });

  /** Tokens that look like org A's admin token (or claim org A from org B's) but are not auth's. */
  async function forgeries(genuine: string, other: Bootstrap): Promise<string[]> {
    const [header, payload, signature] = genuine.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string };
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const { privateKey } = await generateKeyPair('ES256');
    const signedByUs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
      .sign(privateKey);
    return [
      `${part({ alg: 'none', typ: 'at+jwt', kid })}.${payload}.`,
      `${part({ alg: 'none', typ: 'at+jwt', kid })}.${payload}.${signature}`,
      signedByUs,
      // Tampered payloads under the genuine signature: another org, wider scope, a later expiry.
      `${header}.${part({ ...claims, org_id: other.org_id })}.${signature}`,
      `${header}.${part({ ...claims, scope: ADMIN_SCOPES.join(' ') + ' admin:all' })}.${signature}`,
      `${header}.${part({ ...claims, exp: Number(claims.exp) + 86_400 })}.${signature}`,
      // The genuine token with its signature cut or flipped.
      `${header}.${payload}.`,
      `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
    ];
  }
});
