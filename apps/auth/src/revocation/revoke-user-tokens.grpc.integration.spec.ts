import { callRaw, createRawClient, grpcFailureToDomainError, RawClient } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Metadata, status } from '@grpc/grpc-js';
import { decodeJwt } from 'jose';

import { VerifiedUser } from '../identity/identity.client';
import { hashRefreshToken } from '../refresh/refresh-token';
import { AuthHarness } from '../test-support/auth-harness';
import { PROTO_DIR } from '../test-support/fake-identity';
import { internalRevocationToken } from '../test-support/internal-token';
import { passwordLogin } from '../test-support/login-requests';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { TokenService } from '../tokens/token.service';

jest.setTimeout(60_000);

const ORG = '0c5e7a52-3f1d-4b8e-9a6c-2d4f6b8a0c1e';
const ADMIN: VerifiedUser = {
  id: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
  orgId: ORG,
  email: 'admin@example.test',
  status: 'active',
  roles: ['admin'],
};
const MEMBER: VerifiedUser = {
  id: 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e',
  orgId: ORG,
  email: 'member@example.test',
  status: 'active',
  roles: ['member'],
};

/** Admins identity no longer holds for one (disabled, deleted or demoted), whatever their tokens say. */
const formerAdmins = new Set<string>();

const withToken = (token: string) => {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
};

/**
 * RevokeUserTokens called directly over gRPC (the gateway has no route to it): an admin's token is
 * judged as every other admin action of auth judges it, against what identity holds now.
 */
describe('RevokeUserTokens over gRPC (real Postgres, Redis, NATS)', () => {
  let database: TestDatabase;
  let harness: AuthHarness;
  let client: RawClient;

  const login = (user: VerifiedUser) => harness.get(TokenService).issue(passwordLogin({ username: user.email }));
  const revokeUserTokens = (token: string, userId: string, orgId = '') =>
    callRaw<Record<string, unknown>, { revokedSessions: number }>(
      client,
      'revokeUserTokens',
      { userId, orgId },
      5000,
      withToken(token),
    );
  const refreshRevoked = async (refreshToken: string) =>
    (
      await database.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM refresh_tokens WHERE token_hash = $1', [
        hashRefreshToken(refreshToken),
      ])
    )[0].revoked_at !== null;

  beforeAll(async () => {
    database = await createTestDatabase();
    harness = await AuthHarness.start({
      databaseUrl: database.url,
      grpc: true,
      identityClient: {
        verifyPassword: (email, password) =>
          Promise.resolve(password === 'right-password' ? [ADMIN, MEMBER].find((u) => u.email === email) : undefined),
        isActiveAdmin: (callerToken) => {
          const sub = (decodeJwt(callerToken) as { sub: string }).sub;
          return Promise.resolve(sub === ADMIN.id && !formerAdmins.has(sub));
        },
        // As identity's GetUser with the caller's token: a user of the caller's own org only.
        visibleTo: (callerToken, userId) => {
          const orgId = (decodeJwt(callerToken) as { org_id: string }).org_id;
          return Promise.resolve([ADMIN, MEMBER].some((u) => u.id === userId.toLowerCase() && u.orgId === orgId));
        },
      },
    });
    client = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', harness.address, PROTO_DIR);
  });

  afterAll(async () => {
    client?.close();
    await harness?.close();
    await database?.drop();
  });

  it('lets no admin identity no longer holds for one end a user’s sessions, whatever its token says', async () => {
    const admin = await login(ADMIN);
    const member = await login(MEMBER);
    harness.clock.advance(2000); // the sessions above began in an earlier second than the revocation
    formerAdmins.add(ADMIN.id);
    try {
      let refused: { code: number; error: DomainError } | undefined;
      await revokeUserTokens(admin.accessToken, MEMBER.id).catch((error: unknown) => {
        refused = { code: (error as { code: number }).code, error: grpcFailureToDomainError(error, 'auth') };
      });
      expect(refused?.code).toBe(status.PERMISSION_DENIED);
      expect(refused?.error.code).toBe('forbidden');
      expect(await refreshRevoked(member.refreshToken)).toBe(false);
    } finally {
      formerAdmins.delete(ADMIN.id);
    }
    // Still an admin: the same call ends the member's session.
    await expect(revokeUserTokens(admin.accessToken, MEMBER.id)).resolves.toEqual({ revokedSessions: 1 });
    expect(await refreshRevoked(member.refreshToken)).toBe(true);
  });

  it('records an admin’s ending of a user’s sessions in the admin audit, as RevokeUserSessions does', async () => {
    const entries = () =>
      database.query<{ actor_id: string; target_type: string; details: unknown }>(
        'SELECT actor_id, target_type, details FROM admin_audit WHERE org_id = $1 AND action = $2 AND target_id = $3',
        [ORG, 'user.sessions_revoked', MEMBER.id],
      );
    const before = (await entries()).length;
    // Later logins come later: one in the last revocation's own millisecond would end with it.
    harness.clock.advance(1000);
    const admin = await login(ADMIN);
    await login(MEMBER);
    harness.clock.advance(2000);
    await expect(revokeUserTokens(admin.accessToken, MEMBER.id.toUpperCase())).resolves.toEqual({
      revokedSessions: 1,
    });
    const after = await entries();
    expect(after).toHaveLength(before + 1);
    expect(after).toContainEqual({ actor_id: ADMIN.id, target_type: 'user', details: { revoked_sessions: '1' } });
  });

  // As RevokeUserSessions: up to and including the millisecond the revocation is made, so a session
  // begun as the request arrives ends too, whoever asks (it ended none of them).
  it('ends a session begun in the revocation’s own millisecond when an admin asks', async () => {
    const admin = await login(ADMIN);
    harness.clock.advance(2000);
    const member = await login(MEMBER);
    await expect(revokeUserTokens(admin.accessToken, MEMBER.id)).resolves.toEqual({ revokedSessions: 1 });
    expect(await refreshRevoked(member.refreshToken)).toBe(true);
  });

  it('ends a session begun in the revocation’s own millisecond when an internal caller asks', async () => {
    harness.clock.advance(2000);
    const internal = await internalRevocationToken(harness, ORG);
    const again = await login(MEMBER);
    await revokeUserTokens(internal, MEMBER.id, ORG);
    expect(await refreshRevoked(again.refreshToken)).toBe(true);
  });

  // As every other admin action on a user: identity says whether the user is of the admin's org, and
  // nothing is recorded of an action on a user the org does not have.
  it('answers NOT_FOUND to an admin naming a user its org does not have, and records nothing', async () => {
    const admin = await login(ADMIN);
    const unknown = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';
    let refused: { code: number; error: DomainError } | undefined;
    await revokeUserTokens(admin.accessToken, unknown).catch((error: unknown) => {
      refused = { code: (error as { code: number }).code, error: grpcFailureToDomainError(error, 'auth') };
    });
    expect(refused?.code).toBe(status.NOT_FOUND);
    expect(refused?.error.code).toBe('not_found');
    const recorded = await database.query('SELECT id FROM admin_audit WHERE org_id = $1 AND target_id = $2', [
      ORG,
      unknown,
    ]);
    expect(recorded).toEqual([]);
  });
});
