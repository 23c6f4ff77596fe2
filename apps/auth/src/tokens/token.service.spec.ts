import { AccessTokenVerifier } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { decodeJwt, decodeProtectedHeader } from 'jose';

import { ClientService } from '../clients/client.service';
import { VerifiedUser } from '../identity/identity.client';
import { JwksGrpcController } from '../keys/jwks.grpc-controller';
import { SigningKeyService } from '../keys/signing-key.service';
import { LoginSource } from '../lockout/login-source';
import { LoginThrottle } from '../lockout/login-throttle';
import { AuthHarness } from '../test-support/auth-harness';
import { refusal } from '../test-support/refusal';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { TokenRequest } from './grants/grant';
import { TokenService } from './token.service';

const ORG = '3f0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f';
const ADMIN: VerifiedUser = {
  id: '0d5b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  orgId: ORG,
  email: 'Admin@Example.test',
  status: 'active',
  roles: ['admin'],
};

/** The identity stub: one password per e-mail; anything else is "not valid", as identity answers. */
class StubIdentity {
  readonly asked: string[] = [];
  private readonly users = new Map<string, { password: string; user: VerifiedUser }>();

  add(password: string, user: VerifiedUser) {
    this.users.set(user.email.toLowerCase(), { password, user });
    return user;
  }

  verifyPassword(email: string, password: string): Promise<VerifiedUser | undefined> {
    this.asked.push(email);
    const known = this.users.get(email);
    return Promise.resolve(known?.password === password ? known.user : undefined);
  }
}

const request = (fields: Partial<TokenRequest>): TokenRequest => ({
  grantType: '',
  username: '',
  password: '',
  scope: '',
  mfaCode: '',
  clientId: '',
  clientSecret: '',
  refreshToken: '',
  clientIp: '203.0.113.7',
  deviceId: 'device-1',
  userAgent: 'jest',
  ...fields,
});

describe('TokenService: password and client_credentials grants (real Postgres, identity stubbed)', () => {
  let database: TestDatabase;
  let harness: AuthHarness;
  let tokens: TokenService;
  let verifier: AccessTokenVerifier;
  const identity = new StubIdentity();
  const lockoutCalls: string[] = [];
  const throttle: Pick<LoginThrottle, 'admit' | 'succeeded'> = {
    admit: (source: LoginSource) => {
      lockoutCalls.push(`take ${source.username} ${source.clientIp} ${source.deviceId}`);
      if (source.username === 'locked@example.test') {
        return Promise.reject(new DomainError('login_locked', 'Locked.', { retryAfter: 60 }));
      }
      return Promise.resolve({ pair: new Date() });
    },
    succeeded: (source: LoginSource) =>
      Promise.resolve(void lockoutCalls.push(`clear ${source.username}`)).then(() => ''),
  };

  const password = (fields: Partial<TokenRequest> = {}) =>
    tokens.issue(request({ grantType: 'password', username: ADMIN.email, password: 'admin-pass-1', ...fields }));

  beforeAll(async () => {
    database = await createTestDatabase();
    harness = await AuthHarness.start({
      databaseUrl: database.url,
      identityClient: identity,
      overrides: [{ provide: LoginThrottle, useValue: throttle }],
    });
    tokens = harness.get(TokenService);
    const jwks = harness.get(JwksGrpcController);
    verifier = new AccessTokenVerifier({
      issuer: harness.config.TOKEN_ISSUER,
      audience: harness.config.TOKEN_AUDIENCE,
      fetchKeys: () => jwks.getJwks(),
    });
    identity.add('admin-pass-1', ADMIN);
  });

  afterAll(async () => {
    await harness?.close();
    await database?.drop();
  });

  describe('any grant', () => {
    it('refuses a request without grant_type with invalid_request', async () => {
      const error = await refusal(tokens.issue(request({})));
      expect(error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(error.options.extensions).toEqual({ error: 'invalid_request', error_description: error.detail });
    });

    it('refuses an unknown grant type with unsupported_grant_type', async () => {
      const error = await refusal(tokens.issue(request({ grantType: 'implicit' })));
      expect(error).toMatchObject({ code: 'unsupported_grant_type', status: 400 });
      expect(error.options.extensions).toMatchObject({ error: 'unsupported_grant_type' });
    });
  });

  describe('password', () => {
    it('issues an RFC 9068 access token and a refresh token with the role defaults', async () => {
      const set = await password();
      expect(set).toEqual({
        accessToken: expect.any(String),
        refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        tokenType: 'Bearer',
        expiresIn: 7200,
        scope: 'instances:write system:read users:read users:write',
        // The device credential comes from the ceiling (stubbed here: account-ceiling.integration.spec.ts).
        deviceToken: '',
      });
      expect(decodeProtectedHeader(set.accessToken)).toEqual({
        alg: 'ES256',
        typ: 'at+jwt',
        kid: (await harness.get(SigningKeyService).currentSigner()).kid,
      });
      const claims = decodeJwt(set.accessToken);
      expect(claims).toEqual({
        iss: harness.config.TOKEN_ISSUER,
        aud: harness.config.TOKEN_AUDIENCE,
        sub: ADMIN.id,
        iat: expect.any(Number),
        exp: expect.any(Number),
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
        scope: set.scope,
        org_id: ORG,
        client_id: 'account-platform-web',
        roles: ['admin'],
        kind: 'user',
        // The refresh family: revoking it revokes this token.
        sid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      expect(claims.exp! - claims.iat!).toBe(7200);
      expect(claims.iat).toBe(Math.floor(harness.clock.now() / 1000));
      await expect(verifier.verify(set.accessToken)).resolves.toMatchObject({
        subject: ADMIN.id,
        orgId: ORG,
        kind: 'user',
        roles: ['admin'],
      });
    });

    it('gives every token its own jti', async () => {
      const [a, b] = await Promise.all([password(), password()]);
      expect(decodeJwt(a.accessToken).jti).not.toBe(decodeJwt(b.accessToken).jti);
    });

    it('treats the username case-insensitively and trims it', async () => {
      await password({ username: '  ADMIN@example.TEST ' });
      expect(identity.asked.at(-1)).toBe('admin@example.test');
    });

    it('gives a user with several roles the union of their defaults', async () => {
      identity.add('multi-pass-1', {
        ...ADMIN,
        id: 'a1b2c3d4-0000-4000-8000-000000000001',
        email: 'multi@example.test',
        roles: ['viewer', 'member'],
      });
      const set = await password({ username: 'multi@example.test', password: 'multi-pass-1' });
      expect(set.scope).toBe('instances:write system:read users:read');
    });

    it('narrows to the requested scopes and refuses any the roles do not give', async () => {
      expect((await password({ scope: 'users:read' })).scope).toBe('users:read');
      identity.add('viewer-pass-1', {
        ...ADMIN,
        id: 'a1b2c3d4-0000-4000-8000-000000000002',
        email: 'viewer@example.test',
        roles: ['viewer'],
      });
      const error = await refusal(
        password({ username: 'viewer@example.test', password: 'viewer-pass-1', scope: 'users:read users:write' }),
      );
      expect(error).toMatchObject({
        code: 'invalid_scope',
        status: 400,
        options: { extensions: { error: 'invalid_scope' } },
      });
    });

    it('answers an unknown user and a wrong password identically', async () => {
      const unknown = await refusal(password({ username: 'nobody@example.test' }));
      const wrong = await refusal(password({ password: 'not-the-password' }));
      expect(unknown.toPayload()).toEqual(wrong.toPayload());
      expect(unknown.toPayload()).toEqual({
        code: 'invalid_grant',
        status: 400,
        detail: 'The username or password is incorrect.',
        extensions: { error: 'invalid_grant', error_description: 'The username or password is incorrect.' },
      });
    });

    it('tells a pending account it is not active only after a correct password', async () => {
      identity.add('pending-pass-1', {
        ...ADMIN,
        id: 'a1b2c3d4-0000-4000-8000-000000000003',
        email: 'pending@example.test',
        status: 'pending',
      });
      const right = await refusal(password({ username: 'pending@example.test', password: 'pending-pass-1' }));
      expect(right).toMatchObject({ code: 'account_not_active', status: 400 });
      expect(right.options.extensions).toMatchObject({ error: 'invalid_grant' });
      const wrong = await refusal(password({ username: 'pending@example.test', password: 'nope' }));
      expect(wrong.code).toBe('invalid_grant');
    });

    it('tells a disabled account it is disabled only after a correct password (contract §7)', async () => {
      identity.add('disabled-pass-1', {
        ...ADMIN,
        id: 'a1b2c3d4-0000-4000-8000-000000000004',
        email: 'disabled@example.test',
        status: 'disabled',
      });
      const right = await refusal(password({ username: 'disabled@example.test', password: 'disabled-pass-1' }));
      expect(right).toMatchObject({ code: 'account_disabled', status: 400 });
      expect(right.options.extensions).toMatchObject({ error: 'invalid_grant' });
      const wrong = await refusal(password({ username: 'disabled@example.test', password: 'nope' }));
      expect(wrong.code).toBe('invalid_grant');
    });

    it.each([
      ['username', { username: '' }],
      ['password', { password: '' }],
    ])('refuses a request without %s with invalid_request', async (field, fields) => {
      const error = await refusal(password(fields));
      expect(error.code).toBe('invalid_request');
      expect(error.detail).toContain(field);
    });

    it('takes a lockout slot before the password check, with who asks, and frees it only on success', async () => {
      lockoutCalls.length = 0;
      await password();
      await refusal(password({ password: 'wrong' }));
      expect(lockoutCalls).toEqual([
        `take admin@example.test 203.0.113.7 device-1`,
        `clear admin@example.test`,
        `take admin@example.test 203.0.113.7 device-1`,
      ]);
    });

    it('lets the lockout refuse before identity is even asked', async () => {
      identity.asked.length = 0;
      const error = await refusal(password({ username: 'locked@example.test' }));
      expect(error).toMatchObject({ code: 'login_locked', status: 429 });
      expect(identity.asked).toEqual([]);
    });

    it('refuses an unknown client_id with invalid_client and a Basic challenge', async () => {
      const error = await refusal(password({ clientId: 'no-such-client', clientSecret: 'x' }));
      expect(error).toMatchObject({ code: 'invalid_client', status: 401 });
      expect(error.options.headers).toEqual({ 'WWW-Authenticate': 'Basic realm="account-platform"' });
    });

    it('refuses a confidential client not registered for the password grant', async () => {
      const client = await harness.get(ClientService).create({ orgId: ORG, name: 'robot', scopes: ['users:read'] });
      const error = await refusal(password({ clientId: client.clientId, clientSecret: client.clientSecret }));
      expect(error).toMatchObject({
        code: 'unauthorized_client',
        status: 400,
        options: { extensions: { error: 'unauthorized_client' } },
      });
    });
    it('issues tokens to a client registered for the password grant, within its registered scopes', async () => {
      const client = await harness.get(ClientService).create({
        orgId: ORG,
        name: 'cli',
        grantTypes: ['password', 'refresh_token'],
        scopes: ['users:read', 'system:read'],
      });
      const set = await password({ clientId: client.clientId, clientSecret: client.clientSecret });
      expect(set.scope).toBe('system:read users:read');
      expect(decodeJwt(set.accessToken).client_id).toBe(client.clientId);
      expect((await refusal(password({ clientId: client.clientId, clientSecret: 'wrong' }))).code).toBe(
        'invalid_client',
      );
      expect(
        (
          await refusal(
            password({ clientId: client.clientId, clientSecret: client.clientSecret, scope: 'users:write' }),
          )
        ).code,
      ).toBe('invalid_scope');
    });

    // RFC 6749 §3.3: without a scope parameter the default applies, or the request fails with
    // invalid_scope. A default that leaves nothing (the client's scopes and the account's share none)
    // was a 200 with `scope: ""`, an access token every route refuses and a 30-day refresh token; the
    // login page refuses the same sign-in with invalid_scope.
    it('refuses with invalid_scope a login whose client and account share no scope, issuing nothing', async () => {
      const viewer = identity.add('viewer-pass-2', {
        ...ADMIN,
        id: 'a1b2c3d4-0000-4000-8000-000000000003',
        email: 'reader@example.test',
        roles: ['viewer'],
      });
      const client = await harness.get(ClientService).create({
        orgId: ORG,
        name: 'writer',
        grantTypes: ['password', 'refresh_token'],
        scopes: ['users:write'],
      });
      const error = await refusal(
        password({
          username: viewer.email,
          password: 'viewer-pass-2',
          clientId: client.clientId,
          clientSecret: client.clientSecret,
        }),
      );
      expect(error).toMatchObject({
        code: 'invalid_scope',
        status: 400,
        options: { extensions: { error: 'invalid_scope' } },
      });
      const families = await database.query('SELECT id FROM refresh_tokens WHERE user_id = $1::uuid', [viewer.id]);
      expect(families).toEqual([]);
    });
  });

  describe('client_credentials', () => {
    const credentials = (fields: Partial<TokenRequest>) =>
      tokens.issue(request({ grantType: 'client_credentials', ...fields }));

    it('issues a client token with the client roles and every registered scope, and no refresh token', async () => {
      const { clientId, clientSecret } = await harness.get(ClientService).ensureBootstrap(ORG);
      const set = await credentials({ clientId, clientSecret: clientSecret! });
      expect(set).toMatchObject({ refreshToken: '', tokenType: 'Bearer', expiresIn: 7200 });
      expect(set.scope).toBe('instances:write system:read users:read users:write');
      await expect(verifier.verify(set.accessToken)).resolves.toMatchObject({
        subject: clientId,
        clientId,
        orgId: ORG,
        kind: 'client',
        roles: ['admin'],
      });
    });

    it('narrows to requested scopes and refuses scopes the client lacks', async () => {
      const { clientId, clientSecret } = await harness
        .get(ClientService)
        .create({ orgId: ORG, name: 'reader', scopes: ['users:read', 'system:read'] });
      expect((await credentials({ clientId, clientSecret, scope: 'system:read' })).scope).toBe('system:read');
      const error = await refusal(credentials({ clientId, clientSecret, scope: 'users:write' }));
      expect(error.code).toBe('invalid_scope');
    });

    it('refuses a wrong secret and an unknown client alike: 401 invalid_client with a Basic challenge', async () => {
      const { clientId } = await harness.get(ClientService).create({ orgId: ORG, name: 'x', scopes: ['users:read'] });
      const wrong = await refusal(credentials({ clientId, clientSecret: 'not-the-secret' }));
      const unknown = await refusal(credentials({ clientId: 'unknown-client', clientSecret: 'not-the-secret' }));
      expect(wrong.toPayload()).toEqual(unknown.toPayload());
      expect(wrong.toPayload()).toMatchObject({
        code: 'invalid_client',
        status: 401,
        extensions: { error: 'invalid_client' },
        headers: { 'WWW-Authenticate': 'Basic realm="account-platform"' },
      });
    });

    // RFC 6749 §5.2: "no client authentication included" is invalid_client (401), as a wrong secret is.
    it('refuses a request without client_id or client_secret as a wrong secret: 401 invalid_client', async () => {
      const { clientId } = await harness.get(ClientService).create({ orgId: ORG, name: 'y', scopes: ['users:read'] });
      const wrong = await refusal(credentials({ clientId, clientSecret: 'not-the-secret' }));
      for (const fields of [{ clientSecret: 'x' }, { clientId: 'unknown-client' }, { clientId }]) {
        expect((await refusal(credentials(fields))).toPayload()).toEqual(wrong.toPayload());
      }
    });
  });
});
