import { Caller } from '@acct/access-token';
import { authV1 } from '@acct/contracts';

import { ClientService } from '../clients/client.service';
import { VerifiedUser } from '../identity/identity.client';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { passwordLogin } from '../test-support/login-requests';
import { TokenRequest } from '../tokens/grants/grant';
import { LoginAudit } from './login-audit';

const ORG = '5a0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f';
const USER: VerifiedUser = {
  id: '7b0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  orgId: ORG,
  email: 'grace@example.test',
  status: 'active',
  roles: ['admin'],
};

const identity = {
  verifyPassword: (email: string, password: string) =>
    Promise.resolve(email === USER.email && password === 'right-password' ? USER : undefined),
  // The caller's token is an admin's that identity still holds for one.
  isActiveAdmin: () => Promise.resolve(true),
};

const attempt = (fields: Partial<TokenRequest>): TokenRequest =>
  passwordLogin({
    username: USER.email,
    clientIp: '203.0.113.50',
    deviceId: 'laptop-7',
    userAgent: 'audit-test/1.0',
    ...fields,
  });

const list = (fields: Partial<authV1.ListLoginAuditRequest>): authV1.ListLoginAuditRequest => ({
  limit: 0,
  cursor: '',
  userId: '',
  outcome: '',
  ...fields,
});

const callerOf = (roles: string[]): Caller => ({
  subject: USER.id,
  kind: 'user',
  orgId: ORG,
  clientId: 'web',
  scopes: new Set(['users:read']),
  roles,
  tokenId: 'jti',
  expiresAt: Date.now() + 60_000,
});

describe('login audit (real Postgres)', () => {
  const auth = useAuthOnTestDatabase({ identityClient: identity });

  beforeAll(async () => {
    const tokens = auth.tokens;
    await tokens.issue(attempt({}));
    await tokens.issue(attempt({ password: 'wrong-password', clientIp: '203.0.113.51' })).catch(() => undefined);
    await tokens.issue(attempt({ grantType: 'implicit' })).catch(() => undefined);
  });

  it('records every token request with who, where, how and what came of it, and never a secret', async () => {
    const rows = await auth.database.query<Record<string, string>>(
      'SELECT grant_type, username, subject, org_id, client_id, client_ip, device_id, user_agent, outcome, reason FROM login_audit ORDER BY at',
    );
    expect(rows).toEqual([
      {
        grant_type: 'password',
        username: 'grace@example.test',
        subject: USER.id,
        org_id: ORG,
        // No client_id sent: the tokens are the built-in public client's, and so is the entry.
        client_id: 'account-platform-web',
        client_ip: '203.0.113.50',
        device_id: 'laptop-7',
        user_agent: 'audit-test/1.0',
        outcome: 'success',
        reason: 'issued',
      },
      expect.objectContaining({
        username: 'grace@example.test',
        client_id: 'account-platform-web',
        client_ip: '203.0.113.51',
        outcome: 'failure',
        reason: 'invalid_grant',
      }),
      expect.objectContaining({
        grant_type: 'implicit',
        client_id: '',
        subject: null,
        org_id: null,
        outcome: 'failure',
        reason: 'unsupported_grant_type',
      }),
    ]);
    const everything = JSON.stringify(await auth.database.query('SELECT * FROM login_audit'));
    expect(everything).not.toContain('right-password');
    expect(everything).not.toContain('wrong-password');
  });

  it("lets the org's admins read their org's entries, newest first", async () => {
    const { entries } = await auth.harness
      .get(LoginAudit)
      .list(callerOf(['admin']), 'admin-token', list({ limit: 10 }));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      outcome: 'success',
      subject: USER.id,
      deviceId: 'laptop-7',
      clientIp: '203.0.113.50',
    });
  });

  it('refuses anyone else', async () => {
    await expect(
      auth.harness.get(LoginAudit).list(callerOf(['member']), 'admin-token', list({})),
    ).rejects.toMatchObject({
      code: 'forbidden',
    });
  });

  it('refuses an admin’s token without users:read (insufficient_scope), whichever transport calls it', async () => {
    const narrowed: Caller = { ...callerOf(['admin']), scopes: new Set(['system:read']) };
    await expect(auth.harness.get(LoginAudit).list(narrowed, 'admin-token', list({}))).rejects.toMatchObject({
      code: 'insufficient_scope',
    });
  });
});

describe('login audit of refreshes (real Postgres)', () => {
  const auth = useAuthOnTestDatabase({ identityClient: identity });
  const refresh = (refreshToken: string, fields: Partial<TokenRequest> = {}) =>
    auth.tokens.issue(
      attempt({
        grantType: 'refresh_token',
        username: '',
        password: '',
        refreshToken,
        clientIp: '203.0.113.60',
        deviceId: 'phone-2',
        userAgent: 'audit-test/2.0',
        ...fields,
      }),
    );

  it('records each refresh once, a success with its user and org, a refusal without, never a token', async () => {
    const login = await auth.tokens.issue(attempt({}));
    // The one-statement rotation (a first use without scope), then the full path (a narrowing scope).
    const rotated = await refresh(login.refreshToken);
    const narrowed = await refresh(rotated.refreshToken, { scope: 'users:read' });
    await expect(refresh('not-a-refresh-token')).rejects.toMatchObject({ code: 'invalid_grant' });
    expect(narrowed.scope).toBe('users:read');

    const rows = await auth.database.query<Record<string, string | null>>(
      `SELECT grant_type, username, subject, org_id, client_ip, device_id, user_agent, outcome, reason
       FROM login_audit WHERE grant_type = 'refresh_token' ORDER BY at, outcome DESC`,
    );
    const success = {
      grant_type: 'refresh_token',
      username: '',
      subject: USER.id,
      org_id: ORG,
      client_ip: '203.0.113.60',
      device_id: 'phone-2',
      user_agent: 'audit-test/2.0',
      outcome: 'success',
      reason: 'issued',
    };
    expect(rows).toEqual([
      success,
      success,
      { ...success, subject: null, org_id: null, outcome: 'failure', reason: 'invalid_grant' },
    ]);
    const everything = JSON.stringify(await auth.database.query('SELECT * FROM login_audit'));
    for (const token of [login.refreshToken, rotated.refreshToken, narrowed.refreshToken]) {
      expect(everything).not.toContain(token);
    }
  });
});

describe("login audit of a known client's and a known refresh token's failures (real Postgres)", () => {
  const auth = useAuthOnTestDatabase({ identityClient: identity });
  const admin = () =>
    auth.harness.get(LoginAudit).list(callerOf(['admin']), 'admin-token', list({ limit: 100, outcome: 'failure' }));

  it("shows the org's admins a reused refresh token, attributed to its user (README Decisions, reference Audit)", async () => {
    const login = await auth.tokens.issue(attempt({}));
    const refresh = () =>
      auth.tokens.issue(
        attempt({ grantType: 'refresh_token', username: '', password: '', refreshToken: login.refreshToken }),
      );
    await refresh();
    auth.harness.clock.advance(6_000);
    await expect(refresh()).rejects.toMatchObject({ code: 'invalid_grant' });
    const { entries } = await admin();
    expect(entries).toEqual([
      expect.objectContaining({
        grantType: 'refresh_token',
        subject: USER.id,
        outcome: 'failure',
        reason: 'invalid_grant',
      }),
    ]);
  });

  it("shows the org's admins a known client's failed client_credentials request", async () => {
    const { clientId } = await auth.harness
      .get(ClientService)
      .create({ orgId: ORG, name: 'audited', scopes: ['users:read'] });
    const request = attempt({
      grantType: 'client_credentials',
      username: '',
      password: '',
      clientId,
      clientSecret: 'wrong',
    });
    await expect(auth.tokens.issue(request)).rejects.toMatchObject({ code: 'invalid_client' });
    const { entries } = await admin();
    expect(entries.find((entry) => entry.grantType === 'client_credentials')).toMatchObject({
      grantType: 'client_credentials',
      clientId,
      subject: clientId,
      outcome: 'failure',
      reason: 'invalid_client',
    });
  });
});
