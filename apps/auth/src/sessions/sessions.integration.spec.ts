import { AccessTokenVerifier, Caller } from '@acct/access-token';
import { ACCESS_TOKEN_VERIFIER } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Revocations } from '@acct/revocation';
import { decodeJwt } from 'jose';

import { AdminAuditRepository } from '../audit/admin-audit.repository';
import { ClientService } from '../clients/client.service';
import { VerifiedUser } from '../identity/identity.client';
import { AuthHarness } from '../test-support/auth-harness';
import { passwordLogin } from '../test-support/login-requests';
import { refusal } from '../test-support/refusal';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { TokenSet } from '../tokens/grants/grant';
import { TokenService } from '../tokens/token.service';
import { SessionsService } from './sessions.service';

jest.setTimeout(60_000);

const ORG = '9b2f4c1e-8d3a-4f5b-a6c7-d8e9f0a1b2c3';
const OTHER_ORG = '1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
const user = (id: string, email: string, roles: string[], orgId = ORG): VerifiedUser => ({
  id,
  orgId,
  email,
  status: 'active',
  roles,
});
const ADMIN = user('7c9e6679-7425-40de-944b-e07fc1f90ae7', 'ada@example.test', ['admin']);
const MEMBER = user('3d1c8a2b-5e4f-4a6b-9c7d-8e9f0a1b2c3d', 'bob@example.test', ['member']);
const VIEWER = user('5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d', 'cy@example.test', ['viewer']);
const STRANGER = user('0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', 'eve@example.test', ['admin'], OTHER_ORG);
const USERS = [ADMIN, MEMBER, VIEWER, STRANGER];
/** Admins identity no longer holds for one (disabled, deleted or demoted), whatever their tokens say. */
const formerAdmins = new Set<string>();

describe('a user’s sessions in auth (real Postgres, Redis, NATS)', () => {
  let database: TestDatabase;
  let harness: AuthHarness;
  let tokens: TokenService;
  let sessions: SessionsService;
  let verifier: AccessTokenVerifier;

  const login = (who: VerifiedUser, origin: { clientIp?: string; deviceId?: string; userAgent?: string } = {}) =>
    tokens.issue(passwordLogin({ username: who.email, ...origin }));
  const as = async (who: VerifiedUser): Promise<{ caller: Caller; token: string }> => {
    const { accessToken } = await login(who);
    return { caller: await verifier.verify(accessToken), token: accessToken };
  };
  const sidOf = (set: TokenSet) => (decodeJwt(set.accessToken) as { sid: string }).sid;
  const accepted = (token: string) =>
    verifier.verify(token).then(
      () => true,
      () => false,
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    harness = await AuthHarness.start({
      databaseUrl: database.url,
      identityClient: {
        verifyPassword: (email, password) =>
          Promise.resolve(password === 'right-password' ? USERS.find((u) => u.email === email) : undefined),
        // As identity's GetUser with the caller's token: a user of the caller's own org only (an id in
        // any letter case, as identity reads UUIDs).
        isActiveAdmin: (callerToken) => {
          const self = USERS.find((u) => u.id === (decodeJwt(callerToken) as { sub: string }).sub);
          return Promise.resolve(!!self?.roles.includes('admin') && !formerAdmins.has(self.id));
        },
        visibleTo: (callerToken, userId) => {
          const orgId = (decodeJwt(callerToken) as { org_id: string }).org_id;
          return Promise.resolve(USERS.some((u) => u.id === userId.toLowerCase() && u.orgId === orgId));
        },
      },
    });
    tokens = harness.get(TokenService);
    sessions = harness.get(SessionsService);
    verifier = harness.get<AccessTokenVerifier>(ACCESS_TOKEN_VERIFIER as never);
  });

  afterAll(async () => {
    await harness?.close();
    await database?.drop();
  });

  it('lists the live sessions with where they began and when they were last refreshed, newest first', async () => {
    const first = await login(MEMBER, { clientIp: '198.51.100.7', deviceId: 'phone-1', userAgent: 'App/1.0' });
    harness.clock.advance(5_000);
    const refreshed = await tokens.issue(
      passwordLogin({ grantType: 'refresh_token', refreshToken: first.refreshToken }),
    );
    harness.clock.advance(5_000);
    const second = await login(MEMBER, { clientIp: '203.0.113.9', deviceId: '', userAgent: 'curl/8' });
    const self = { caller: await verifier.verify(second.accessToken), token: second.accessToken };

    const listed = await sessions.list(self.caller, self.token, 'me');
    const ids = listed.map((session) => session.id);
    expect(ids.indexOf(sidOf(second))).toBeLessThan(ids.indexOf(sidOf(first)));
    const firstSession = listed.find((session) => session.id === sidOf(first));
    expect(firstSession).toMatchObject({
      clientId: 'account-platform-web',
      origin: { ip: '198.51.100.7', deviceId: 'phone-1', userAgent: 'App/1.0' },
    });
    expect(firstSession!.lastUsedAt.getTime() - firstSession!.createdAt.getTime()).toBe(5_000);
    expect(sidOf(refreshed)).toBe(sidOf(first));
  });

  it('lists a session’s user agent and device id with their control characters escaped, as the login audit does', async () => {
    // A header may carry a tab and, read as Latin-1, C1 controls (NEL, CSI): visible, never raw.
    const set = await login(MEMBER, { deviceId: 'phone\t1', userAgent: 'App/2.0\u0085\u009b31mGot you\\' });
    const self = { caller: await verifier.verify(set.accessToken), token: set.accessToken };

    const listed = await sessions.list(self.caller, self.token, 'me');
    expect(listed.find((session) => session.id === sidOf(set))?.origin).toMatchObject({
      deviceId: 'phone\\u00091',
      userAgent: 'App/2.0\\u0085\\u009b31mGot you\\\\',
    });
  });

  it('lets an admin of the org list and end a user’s sessions; ending one revokes its access tokens', async () => {
    const admin = await as(ADMIN);
    const kept = await login(VIEWER);
    const ended = await login(VIEWER);
    await sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(ended));
    expect(await accepted(ended.accessToken)).toBe(false);
    expect(await accepted(kept.accessToken)).toBe(true);
    expect(
      (await refusal(tokens.issue(passwordLogin({ grantType: 'refresh_token', refreshToken: ended.refreshToken }))))
        .code,
    ).toBe('invalid_grant');
    const ids = (await sessions.list(admin.caller, admin.token, VIEWER.id)).map((session) => session.id);
    expect(ids).toContain(sidOf(kept));
    expect(ids).not.toContain(sidOf(ended));
    // Ended already, or never the user's: 404.
    expect((await refusal(sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(ended)))).code).toBe('not_found');
    const others = await login(MEMBER);
    expect((await refusal(sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(others)))).code).toBe(
      'not_found',
    );
    expect(await accepted(others.accessToken)).toBe(true);
  });

  it('lets no admin identity no longer holds for one list or end another user’s sessions, whatever its token says', async () => {
    const admin = await as(ADMIN);
    const viewer = await login(VIEWER);
    formerAdmins.add(ADMIN.id);
    try {
      for (const attempt of [
        sessions.list(admin.caller, admin.token, VIEWER.id),
        sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(viewer)),
        sessions.revokeAll(admin.caller, admin.token, VIEWER.id),
      ]) {
        expect((await refusal(attempt)).code).toBe('forbidden');
      }
    } finally {
      formerAdmins.delete(ADMIN.id);
    }
    expect(await accepted(viewer.accessToken)).toBe(true);
  });

  it('refuses the user itself a token without the scope the routes need (users:read), as every use case does', async () => {
    // A token narrowed to system:read (handed to a dashboard, say) may not list or end its user's sessions.
    const narrowed = await tokens.issue(passwordLogin({ username: MEMBER.email, scope: 'system:read' }));
    const self = { caller: await verifier.verify(narrowed.accessToken), token: narrowed.accessToken };
    expect(self.caller.scopes.has('users:read')).toBe(false);
    // One after the other: a revokeAll let through would end the session the revoke names.
    for (const attempt of [
      () => sessions.list(self.caller, self.token, 'me'),
      () => sessions.revoke(self.caller, self.token, 'me', sidOf(narrowed)),
      () => sessions.revokeAll(self.caller, self.token, MEMBER.id),
    ]) {
      expect((await refusal(attempt())).code).toBe('insufficient_scope');
    }
    harness.clock.advance(1000);
    expect(await accepted(narrowed.accessToken)).toBe(true);
  });

  it('ends every session of a user at once', async () => {
    const admin = await as(ADMIN);
    const a = await login(VIEWER);
    const b = await login(VIEWER);
    expect(await sessions.revokeAll(admin.caller, admin.token, VIEWER.id)).toBeGreaterThanOrEqual(2);
    // Later logins come later: one whose password is checked in the revocation's own millisecond ends too.
    harness.clock.advance(1000);
    expect(await accepted(a.accessToken)).toBe(false);
    expect(await accepted(b.accessToken)).toBe(false);
    expect(await sessions.list(admin.caller, admin.token, VIEWER.id)).toEqual([]);
  });

  it('takes a user id in any letter case as that user: its own for a member, all of its sessions ended for an admin', async () => {
    const own = await login(MEMBER);
    const self = { caller: await verifier.verify(own.accessToken), token: own.accessToken };
    expect((await sessions.list(self.caller, self.token, MEMBER.id.toUpperCase())).map((s) => s.id)).toContain(
      sidOf(own),
    );
    const admin = await as(ADMIN);
    const viewers = await login(VIEWER);
    expect(await sessions.revokeAll(admin.caller, admin.token, VIEWER.id.toUpperCase())).toBeGreaterThanOrEqual(1);
    harness.clock.advance(1000);
    expect(await accepted(viewers.accessToken)).toBe(false);
    expect(await sessions.list(admin.caller, admin.token, VIEWER.id)).toEqual([]);
  });

  it('lets an admin client of the org (client_credentials) list and end a user’s sessions, as it administers the user', async () => {
    const { clientId, clientSecret } = await harness
      .get(ClientService)
      .create({ orgId: ORG, name: 'automation', scopes: ['users:read', 'users:write'], roles: ['admin'] });
    const { accessToken } = await tokens.issue(
      passwordLogin({ grantType: 'client_credentials', password: '', clientId, clientSecret }),
    );
    const client = { caller: await verifier.verify(accessToken), token: accessToken };
    const kept = await login(VIEWER);
    const ended = await login(VIEWER);

    const listed = await sessions.list(client.caller, client.token, VIEWER.id);
    expect(listed.map((session) => session.id)).toEqual(expect.arrayContaining([sidOf(kept), sidOf(ended)]));
    await sessions.revoke(client.caller, client.token, VIEWER.id, sidOf(ended));
    expect(await accepted(ended.accessToken)).toBe(false);
    expect(await sessions.revokeAll(client.caller, client.token, VIEWER.id)).toBeGreaterThanOrEqual(1);
    harness.clock.advance(1000);
    expect(await accepted(kept.accessToken)).toBe(false);
    // A client has no sessions of its own: `me` names nobody.
    expect((await refusal(sessions.list(client.caller, client.token, 'me'))).code).toBe('forbidden');
  });

  // A session id is a UUID, which RFC 9562 reads in either letter case, as the user ids beside it are.
  it('ends a session named by its id in capitals', async () => {
    const own = await login(MEMBER);
    const self = { caller: await verifier.verify(own.accessToken), token: own.accessToken };
    await sessions.revoke(self.caller, self.token, 'me', sidOf(own).toUpperCase());
    expect(await accepted(own.accessToken)).toBe(false);
    expect((await sessions.list(self.caller, self.token, 'me')).map((s) => s.id)).not.toContain(sidOf(own));
  });

  // Two requests ending one session at once (a double click): it ends once, so it is audited once,
  // and the one that came second is told the session is no longer there, as it would be a moment later.
  it('ends a session asked to end twice at once once, and audits it once', async () => {
    const admin = await as(ADMIN);
    const ended = await login(VIEWER);
    const outcomes = await Promise.allSettled([
      sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(ended)),
      sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(ended)),
    ]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const entries = await harness.get(AdminAuditRepository).listForOrg(ORG, undefined, 100);
    expect(entries.filter((entry) => entry.targetId === sidOf(ended))).toHaveLength(1);
    expect(await accepted(ended.accessToken)).toBe(false);
  });

  // Revoking answers 503 "retry" while Redis cannot store the access tokens' revocation (a verifier
  // that starts later would not know it): the retry must find the session and store it then.
  it('ends a session on the retry of an end that Redis could not store', async () => {
    const admin = await as(ADMIN);
    const ended = await login(VIEWER);
    const revocations = harness.get(Revocations);
    const store = jest
      .spyOn(revocations, 'revoke')
      .mockRejectedValueOnce(new DomainError('service_unavailable', 'The revocation could not be stored; retry.'));
    try {
      expect((await refusal(sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(ended)))).code).toBe(
        'service_unavailable',
      );
      await sessions.revoke(admin.caller, admin.token, VIEWER.id, sidOf(ended));
      expect(store.mock.calls.at(-1)?.[0]).toEqual([expect.objectContaining({ kind: 'session', sid: sidOf(ended) })]);
    } finally {
      store.mockRestore();
    }
    expect(await accepted(ended.accessToken)).toBe(false);
    const entries = await harness.get(AdminAuditRepository).listForOrg(ORG, undefined, 100);
    expect(entries.filter((entry) => entry.targetId === sidOf(ended))).toHaveLength(1);
  });

  it('lets a user end its own session via me', async () => {
    const own = await login(MEMBER);
    const self = { caller: await verifier.verify(own.accessToken), token: own.accessToken };
    await sessions.revoke(self.caller, self.token, 'me', sidOf(own));
    expect(await accepted(own.accessToken)).toBe(false);
  });

  it('refuses members and viewers another user’s sessions (403) and another org’s admin (404)', async () => {
    const target = await login(ADMIN);
    for (const who of [MEMBER, VIEWER]) {
      const { caller, token } = await as(who);
      expect((await refusal(sessions.list(caller, token, ADMIN.id))).code).toMatch(/^(forbidden|insufficient_scope)$/);
      expect((await refusal(sessions.revoke(caller, token, ADMIN.id, sidOf(target)))).code).toMatch(
        /^(forbidden|insufficient_scope)$/,
      );
      expect((await refusal(sessions.revokeAll(caller, token, ADMIN.id))).code).toMatch(
        /^(forbidden|insufficient_scope)$/,
      );
    }
    const stranger = await as(STRANGER);
    for (const attempt of [
      sessions.list(stranger.caller, stranger.token, ADMIN.id),
      sessions.revoke(stranger.caller, stranger.token, ADMIN.id, sidOf(target)),
      sessions.revokeAll(stranger.caller, stranger.token, ADMIN.id),
      sessions.list(stranger.caller, stranger.token, 'not-a-uuid'),
    ]) {
      expect((await refusal(attempt)).code).toBe('not_found');
    }
    expect(await accepted(target.accessToken)).toBe(true);
  });
});
