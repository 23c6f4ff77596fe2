import { AccessTokenVerifier } from '@acct/access-token';
import { decodeJwt } from 'jose';

import { ClientService } from '../clients/client.service';
import { VerifiedUser } from '../identity/identity.client';
import { JwksGrpcController } from '../keys/jwks.grpc-controller';
import { AuthHarness } from '../test-support/auth-harness';
import { refusal } from '../test-support/refusal';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { TokenRequest } from '../tokens/grants/grant';
import { TokenService } from '../tokens/token.service';
import { hashRefreshToken } from './refresh-token';

const USER: VerifiedUser = {
  id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  orgId: '9b2f4c1e-8d3a-4f5b-a6c7-d8e9f0a1b2c3',
  email: 'member@example.test',
  status: 'active',
  roles: ['member'],
};

const blank: TokenRequest = {
  grantType: '',
  username: '',
  password: '',
  scope: '',
  mfaCode: '',
  clientId: '',
  clientSecret: '',
  refreshToken: '',
  clientIp: '',
  deviceId: '',
  userAgent: '',
};

interface Row {
  id: string;
  family_id: string;
  parent_id: string | null;
  first_used_at: Date | null;
  revoked_at: Date | null;
}

describe('refresh_token grant (real Postgres, injected clock)', () => {
  let database: TestDatabase;
  let harness: AuthHarness;
  let tokens: TokenService;
  let verifier: AccessTokenVerifier;

  const login = async (scope = '') =>
    tokens.issue({ ...blank, grantType: 'password', username: USER.email, password: 'member-pass-1', scope });
  const refresh = (refreshToken: string, fields: Partial<TokenRequest> = {}) =>
    tokens.issue({ ...blank, grantType: 'refresh_token', refreshToken, ...fields });
  const rowOf = async (token: string) =>
    (await database.query<Row>('SELECT * FROM refresh_tokens WHERE token_hash = $1', [hashRefreshToken(token)]))[0];
  const family = (familyId: string) =>
    database.query<Row>('SELECT * FROM refresh_tokens WHERE family_id = $1 ORDER BY created_at', [familyId]);
  const seconds = (n: number) => harness.clock.advance(n * 1000);

  beforeAll(async () => {
    database = await createTestDatabase();
    harness = await AuthHarness.start({
      databaseUrl: database.url,
      identityClient: {
        verifyPassword: (email, password) =>
          Promise.resolve(email === USER.email && password === 'member-pass-1' ? USER : undefined),
      },
    });
    tokens = harness.get(TokenService);
    const controller = harness.get(JwksGrpcController);
    verifier = new AccessTokenVerifier({
      issuer: harness.config.TOKEN_ISSUER,
      audience: harness.config.TOKEN_AUDIENCE,
      fetchKeys: () => controller.getJwks(),
      now: () => harness.clock.now(),
    });
  });

  afterAll(async () => {
    await harness?.close();
    await database?.drop();
  });

  it('stores only a hash of the refresh token, with a 30-day lifetime', async () => {
    const { refreshToken } = await login();
    const rows = await database.query<{ token_hash: string; created_at: Date; expires_at: Date; scope: string }>(
      'SELECT token_hash, created_at, expires_at, scope FROM refresh_tokens WHERE token_hash = $1',
      [hashRefreshToken(refreshToken)],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).not.toContain(refreshToken);
    expect(rows[0].expires_at.getTime() - rows[0].created_at.getTime()).toBe(30 * 24 * 3600 * 1000);
    expect(rows[0].scope).toBe('instances:write system:read users:read');
  });

  it('rotates: a new refresh token of the same family and a new access token for the same user', async () => {
    const first = await login();
    seconds(60);
    const second = await refresh(first.refreshToken);
    expect(second.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.scope).toBe(first.scope);
    expect(second.expiresIn).toBe(7200);
    const caller = await verifier.verify(second.accessToken);
    expect(caller).toMatchObject({
      subject: USER.id,
      orgId: USER.orgId,
      clientId: 'account-platform-web',
      roles: ['member'],
    });
    expect(decodeJwt(second.accessToken).jti).not.toBe(decodeJwt(first.accessToken).jti);

    const [parent, child] = [await rowOf(first.refreshToken), await rowOf(second.refreshToken)];
    expect(child.family_id).toBe(parent.family_id);
    expect(child.parent_id).toBe(parent.id);
    // Stamped at the grant's time plus however long the statement ran in Postgres (a loaded server
    // takes a millisecond or more): never before it, and not a second after it here.
    const usedAt = parent.first_used_at?.getTime() ?? 0;
    expect(usedAt - harness.clock.now()).toBeGreaterThanOrEqual(0);
    expect(usedAt - harness.clock.now()).toBeLessThan(1000);
    expect(child.first_used_at).toBeNull();
  });

  it('keeps the used token working 4 s after its first use; at 6 s refuses it and revokes the whole family', async () => {
    const first = await login();
    const second = await refresh(first.refreshToken);
    seconds(4);
    const third = await refresh(first.refreshToken);
    expect((await rowOf(third.refreshToken)).family_id).toBe((await rowOf(first.refreshToken)).family_id);

    seconds(2); // 6 s after the first use
    const reuse = await refusal(refresh(first.refreshToken));
    expect(reuse.toPayload()).toMatchObject({
      code: 'invalid_grant',
      status: 400,
      extensions: { error: 'invalid_grant' },
    });

    // The thief may hold either descendant: neither works any more.
    for (const descendant of [second.refreshToken, third.refreshToken]) {
      expect((await refusal(refresh(descendant))).code).toBe('invalid_grant');
    }
    const rows = await family((await rowOf(first.refreshToken)).family_id);
    expect(rows).toHaveLength(3);
    expect(rows.every((row) => row.revoked_at !== null)).toBe(true);
  });

  it('treats a reuse after the grace window as theft whatever scope it asks for: invalid_grant, family revoked', async () => {
    const first = await login();
    const second = await refresh(first.refreshToken);
    seconds(6);
    // A scope the family never had must not let a late reuse slip past reuse detection.
    const reuse = await refusal(refresh(first.refreshToken, { scope: 'users:write' }));
    expect(reuse.code).toBe('invalid_grant');
    const rows = await family((await rowOf(first.refreshToken)).family_id);
    expect(rows.every((row) => row.revoked_at !== null)).toBe(true);
    expect((await refusal(refresh(second.refreshToken))).code).toBe('invalid_grant');
  });

  it('counts the grace window from the first use, not the latest', async () => {
    const first = await login();
    await refresh(first.refreshToken);
    seconds(3);
    await refresh(first.refreshToken);
    seconds(3);
    expect((await refusal(refresh(first.refreshToken))).code).toBe('invalid_grant');
  });

  it('lets 10 concurrent refreshes of one token all succeed, every new token in the one family', async () => {
    const first = await login();
    const results = await Promise.all(Array.from({ length: 10 }, () => refresh(first.refreshToken)));
    const issued = results.map((result) => result.refreshToken);
    expect(new Set(issued).size).toBe(10);
    const familyId = (await rowOf(first.refreshToken)).family_id;
    const rows = await family(familyId);
    expect(rows).toHaveLength(11);
    const parent = await rowOf(first.refreshToken);
    expect(rows.filter((row) => row.parent_id === parent.id)).toHaveLength(10);
    // Each new one works on its own.
    for (const token of issued.slice(0, 3))
      await expect(refresh(token)).resolves.toMatchObject({ tokenType: 'Bearer' });
  });

  it('revokes everything when a late reuse races with refreshes of the newest token', async () => {
    const first = await login();
    const second = await refresh(first.refreshToken);
    seconds(6);
    const outcomes = await Promise.allSettled([
      refresh(first.refreshToken),
      ...Array.from({ length: 5 }, () => refresh(second.refreshToken)),
    ]);
    expect(outcomes[0].status).toBe('rejected');
    // Whatever the interleaving, no token of the family is usable afterwards.
    const rows = await family((await rowOf(first.refreshToken)).family_id);
    expect(rows.every((row) => row.revoked_at !== null)).toBe(true);
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled')
        expect((await refusal(refresh(outcome.value.refreshToken))).code).toBe('invalid_grant');
    }
  });

  it('refuses an expired refresh token', async () => {
    const { refreshToken } = await login();
    seconds(30 * 24 * 3600 + 1);
    expect((await refusal(refresh(refreshToken))).code).toBe('invalid_grant');
  });

  it('accepts a refresh token on its last day', async () => {
    const { refreshToken } = await login();
    seconds(30 * 24 * 3600 - 1);
    await expect(refresh(refreshToken)).resolves.toMatchObject({ tokenType: 'Bearer' });
  });

  it('refuses an unknown refresh token, and one without a value', async () => {
    expect((await refusal(refresh('x'.repeat(43)))).code).toBe('invalid_grant');
    expect((await refusal(refresh(''))).code).toBe('invalid_request');
  });

  it('refuses a refresh token presented by another client, and an unknown client as invalid_client', async () => {
    const { refreshToken } = await login();
    const other = await harness.get(ClientService).create({
      orgId: USER.orgId,
      name: 'spa',
      type: 'public',
      grantTypes: ['authorization_code', 'refresh_token'],
      redirectUris: ['https://spa.example/cb'],
      scopes: ['users:read'],
    });
    expect((await refusal(refresh(refreshToken, { clientId: other.clientId }))).code).toBe('invalid_grant');
    expect((await refusal(refresh(refreshToken, { clientId: 'another-client' }))).code).toBe('invalid_client');
    await expect(refresh(refreshToken, { clientId: 'account-platform-web' })).resolves.toBeDefined();
  });

  it('narrows the access token on request but keeps the family scope; never widens', async () => {
    const first = await login('users:read system:read');
    const narrowed = await refresh(first.refreshToken, { scope: 'system:read' });
    expect(narrowed.scope).toBe('system:read');
    expect((await verifier.verify(narrowed.accessToken)).scopes).toEqual(new Set(['system:read']));
    // The next refresh token still carries the login's scope.
    const back = await refresh(narrowed.refreshToken);
    expect(back.scope).toBe('system:read users:read');

    const widened = await refusal(refresh(back.refreshToken, { scope: 'instances:write' }));
    expect(widened.toPayload()).toMatchObject({ code: 'invalid_scope', extensions: { error: 'invalid_scope' } });
    // A refused scope does not consume the token.
    expect((await rowOf(back.refreshToken)).first_used_at).toBeNull();
    await expect(refresh(back.refreshToken)).resolves.toBeDefined();
  });
});
