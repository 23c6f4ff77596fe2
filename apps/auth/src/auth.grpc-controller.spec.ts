import { AccessTokenVerifier, INTERNAL_IDENTITY_SCOPE } from '@acct/access-token';
import { callRaw, createRawClient, grpcFailureToDomainError, jwksFromAuthService, RawClient } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { status } from '@grpc/grpc-js';
import { decodeProtectedHeader } from 'jose';

import { ClientService } from './clients/client.service';
import { SigningKeyService } from './keys/signing-key.service';
import { AuthHarness } from './test-support/auth-harness';
import { FakeIdentity, PROTO_DIR } from './test-support/fake-identity';
import { createTestDatabase, TestDatabase } from './test-support/test-database';

const ORG = 'a3bb189e-8bf9-4888-9912-ace4e6543002';
const USER_ID = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';

interface TokenResponse {
  accessToken: string;
  refreshToken: string;
  tokenType: string;
  expiresIn: number;
  scope: string;
}

/** The auth service over real gRPC, calling a gRPC stand-in for identity, as the gateway sees it. */
describe('AuthService over gRPC', () => {
  let database: TestDatabase;
  let identity: FakeIdentity;
  let harness: AuthHarness;
  let client: RawClient;
  let verifier: AccessTokenVerifier;

  const issueToken = (request: Record<string, string>) =>
    callRaw<Record<string, string>, TokenResponse>(client, 'issueToken', request, 5000);
  /** The error the gateway would make of a failed call. */
  const failure = async (request: Record<string, string>): Promise<{ grpcCode: number; error: DomainError }> => {
    try {
      await issueToken(request);
    } catch (error) {
      return { grpcCode: (error as { code: number }).code, error: grpcFailureToDomainError(error, 'auth') };
    }
    throw new Error('the call succeeded');
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    identity = await FakeIdentity.start();
    harness = await AuthHarness.start({ databaseUrl: database.url, identityAddress: identity.address, grpc: true });
    const fetchKeys = jwksFromAuthService(harness.address, PROTO_DIR);
    identity.trust({ issuer: harness.config.TOKEN_ISSUER, audience: harness.config.TOKEN_AUDIENCE, fetchKeys });
    identity.addUser('Admin@Example.test', 'admin-pass-1', {
      id: USER_ID,
      orgId: ORG,
      status: 'active',
      roles: ['admin'],
    });
    identity.addUser('pending@example.test', 'pending-pass-1', {
      id: 'a1b2c3d4-0000-4000-8000-00000000000a',
      orgId: ORG,
      status: 'pending',
      roles: ['member'],
    });
    client = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', harness.address, PROTO_DIR);
    verifier = new AccessTokenVerifier({
      issuer: harness.config.TOKEN_ISSUER,
      audience: harness.config.TOKEN_AUDIENCE,
      refetchIntervalMs: 0,
      fetchKeys,
    });
  });

  afterAll(async () => {
    client?.close();
    await harness?.close();
    await identity?.close();
    await database?.drop();
  });

  it('publishes the public keys in GetJwks, without any private part', async () => {
    const { keys } = await callRaw<object, { keys: Array<Record<string, string>> }>(client, 'getJwks', {}, 2000);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({
      kty: 'EC',
      kid: expect.any(String),
      use: 'sig',
      alg: 'ES256',
      crv: 'P-256',
      x: expect.stringMatching(/^[\w-]{43}$/),
      y: expect.stringMatching(/^[\w-]{43}$/),
    });
  });

  it('issues a password-grant token that verifies against GetJwks, asking identity with its own service token', async () => {
    const set = await issueToken({ grantType: 'password', username: 'admin@example.test', password: 'admin-pass-1' });
    expect(set).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 7200,
      scope: 'instances:write system:read users:read users:write',
    });
    expect(set.refreshToken).toMatch(/^[\w-]{43}$/);
    await expect(verifier.verify(set.accessToken)).resolves.toMatchObject({
      subject: USER_ID,
      orgId: ORG,
      kind: 'user',
    });

    const caller = identity.callers.at(-1)!;
    expect(caller).toMatchObject({
      subject: 'service:auth',
      kind: 'client',
      clientId: 'auth',
      orgId: '00000000-0000-0000-0000-000000000000',
    });
    expect([...caller.scopes]).toEqual([INTERNAL_IDENTITY_SCOPE]);
    expect(caller.expiresAt - Date.now()).toBeLessThanOrEqual(60_000);
  });

  it('reuses its service token for identity while it is fresh', async () => {
    await issueToken({ grantType: 'password', username: 'admin@example.test', password: 'admin-pass-1' });
    await issueToken({ grantType: 'password', username: 'admin@example.test', password: 'wrong' }).catch(
      () => undefined,
    );
    const [previous, last] = identity.callers.slice(-2);
    expect(last.tokenId).toBe(previous.tokenId);
  });

  it('carries every refusal with its code, status, RFC 6749 members and headers', async () => {
    const { clientId } = await harness.get(ClientService).ensureBootstrap(ORG);
    const wrongSecret = await failure({ grantType: 'client_credentials', clientId, clientSecret: 'nope' });
    expect(wrongSecret.grpcCode).toBe(status.UNAUTHENTICATED);
    expect(wrongSecret.error.toPayload()).toEqual({
      code: 'invalid_client',
      status: 401,
      detail: 'Client authentication failed.',
      extensions: { error: 'invalid_client', error_description: 'Client authentication failed.' },
      headers: { 'WWW-Authenticate': 'Basic realm="account-platform"' },
    });

    const unknown = await failure({ grantType: 'password', username: 'nobody@example.test', password: 'admin-pass-1' });
    const wrong = await failure({ grantType: 'password', username: 'admin@example.test', password: 'wrong-pass' });
    expect(unknown.error.toPayload()).toEqual(wrong.error.toPayload());
    expect(wrong.error.toPayload()).toMatchObject({
      code: 'invalid_grant',
      status: 400,
      extensions: { error: 'invalid_grant' },
    });

    const pending = await failure({
      grantType: 'password',
      username: 'pending@example.test',
      password: 'pending-pass-1',
    });
    expect(pending.error.toPayload()).toMatchObject({
      code: 'account_not_active',
      status: 400,
      extensions: { error: 'invalid_grant' },
    });

    expect((await failure({})).error.code).toBe('invalid_request');
    expect((await failure({ grantType: 'implicit' })).error.code).toBe('unsupported_grant_type');
    expect(
      (
        await failure({
          grantType: 'password',
          username: 'admin@example.test',
          password: 'admin-pass-1',
          scope: 'root',
        })
      ).error.code,
    ).toBe('invalid_scope');
  });

  it('issues client_credentials tokens without a refresh token', async () => {
    const { clientId, clientSecret } = await harness
      .get(ClientService)
      .create({ orgId: ORG, name: 'svc', scopes: ['system:read'] });
    const set = await issueToken({ grantType: 'client_credentials', clientId, clientSecret });
    expect(set).toMatchObject({ refreshToken: '', scope: 'system:read', expiresIn: 7200 });
    await expect(verifier.verify(set.accessToken)).resolves.toMatchObject({
      subject: clientId,
      kind: 'client',
      roles: ['viewer'],
    });
  });

  it('keeps tokens signed before a key rotation valid, and signs new ones with the new kid', async () => {
    const login = { grantType: 'password', username: 'admin@example.test', password: 'admin-pass-1' };
    const before = await issueToken(login);
    const { kid: newKid } = await harness.get(SigningKeyService).rotate();
    const after = await issueToken(login);
    expect(decodeProtectedHeader(after.accessToken).kid).toBe(newKid);
    expect(decodeProtectedHeader(before.accessToken).kid).not.toBe(newKid);
    // A verifier that never saw the new key fetches it; the old key is still published.
    const fresh = new AccessTokenVerifier({
      issuer: harness.config.TOKEN_ISSUER,
      audience: harness.config.TOKEN_AUDIENCE,
      fetchKeys: jwksFromAuthService(harness.address, PROTO_DIR),
    });
    await expect(fresh.verify(before.accessToken)).resolves.toMatchObject({ subject: USER_ID });
    await expect(verifier.verify(after.accessToken)).resolves.toMatchObject({ subject: USER_ID });
    // Logins go on working across the rotation.
    await expect(issueToken(login)).resolves.toMatchObject({ tokenType: 'Bearer' });
  });

  it('answers service_unavailable when identity is unreachable', async () => {
    const database2 = await createTestDatabase();
    const lonely = await AuthHarness.start({ databaseUrl: database2.url, grpc: true });
    const lonelyClient = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', lonely.address, PROTO_DIR);
    try {
      await callRaw(lonelyClient, 'issueToken', { grantType: 'password', username: 'a@b.test', password: 'x' }, 5000);
      throw new Error('the call succeeded');
    } catch (error) {
      expect((error as { code: number }).code).toBe(status.UNAVAILABLE);
      expect(grpcFailureToDomainError(error, 'auth').toPayload()).toMatchObject({
        code: 'service_unavailable',
        status: 503,
      });
    } finally {
      lonelyClient.close();
      await lonely.close();
      await database2.drop();
    }
  });
});
