import { randomUUID } from 'node:crypto';

import { Caller } from '@acct/access-token';
import {
  PASSWORD_RESET_ISSUED,
  PASSWORD_RESET_REQUESTED,
  USER_ACTIVATED,
  USER_DISABLED,
  USER_ENABLED,
  USER_UPDATED,
} from '@acct/events';
import { runInRequestContext } from '@acct/observability';
import { JsMsg } from 'nats';

import { AuthHarness } from '../test-support/auth-harness';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { ADMIN_ACTIONS, AdminAudit } from './admin-audit';
import { AdminAuditEventsConsumer } from './admin-audit-events.consumer';
import { LoginAudit } from './login-audit';

const ORG = '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const OTHER_ORG = '8f7e6d5c-4b3a-4291-8807-f6e5d4c3b2a1';
const ADMIN = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const TARGET = 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e';
/** The caller's bearer token, as auth hands it to identity to ask whether the caller is still an admin. */
const TOKEN = 'admin-token';
/** Tokens of admins identity no longer holds for one (disabled, deleted or demoted), whatever they say. */
const formerAdmins = new Set<string>();

const callerOf = (roles: string[], orgId = ORG): Caller => ({
  subject: ADMIN,
  kind: 'user',
  orgId,
  clientId: 'web',
  scopes: new Set(['users:read']),
  roles,
  tokenId: 'jti',
  expiresAt: Date.now() + 60_000,
});

/** An identity event as JetStream delivers it. */
const delivered = (type: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const event = {
    id: randomUUID(),
    type,
    version: 1,
    occurred_at: '2026-11-23T10:00:00.000Z',
    data,
    ...extra,
  };
  return { event, message: { subject: type, seq: 1, string: () => JSON.stringify(event) } as unknown as JsMsg };
};

describe('admin-action audit (real Postgres)', () => {
  let database: TestDatabase;
  let harness: AuthHarness;
  let audit: AdminAudit;
  let consumer: AdminAuditEventsConsumer;

  beforeAll(async () => {
    database = await createTestDatabase();
    // No broker: the consumer's steps are driven by hand, never by events left on a shared server.
    harness = await AuthHarness.start({
      databaseUrl: database.url,
      env: { NATS_URL: 'nats://127.0.0.1:9' },
      identityClient: {
        verifyPassword: () => Promise.resolve(undefined),
        isActiveAdmin: (callerToken) => Promise.resolve(!formerAdmins.has(callerToken)),
      },
    });
    audit = harness.get(AdminAudit);
    consumer = harness.get(AdminAuditEventsConsumer);
  });

  afterAll(async () => {
    await harness?.close();
    await database?.drop();
  });

  beforeEach(() => database.query('DELETE FROM admin_audit'));

  it("records identity's admin actions from its events: who, what, target, when, request id, and what changed", async () => {
    const { event, message } = delivered(
      USER_UPDATED,
      {
        user_id: TARGET,
        org_id: ORG,
        changed: ['roles', 'display_name'],
        roles_before: ['member'],
        roles_after: ['viewer'],
      },
      { actor_id: ADMIN, request_id: 'req-patch-1' },
    );
    await expect(consumer.handle(message)).resolves.toBe('ack');
    const { entries } = await audit.list(callerOf(['admin']), TOKEN, 10, '');
    expect(entries).toEqual([
      {
        id: event.id,
        at: '2026-11-23T10:00:00.000Z',
        actorId: ADMIN,
        action: 'user.updated',
        targetType: 'user',
        targetId: TARGET,
        requestId: 'req-patch-1',
        detailsJson: expect.any(String),
      },
    ]);
    expect(JSON.parse(entries[0].detailsJson)).toEqual({
      changed: ['roles', 'display_name'],
      roles_before: ['member'],
      roles_after: ['viewer'],
    });
  });

  it('records a redelivered event once', async () => {
    const { message } = delivered(USER_DISABLED, {
      user_id: TARGET,
      org_id: ORG,
      occurred_at: '2026-11-23T10:00:00.000Z',
    });
    await expect(consumer.handle(message)).resolves.toBe('ack');
    await expect(consumer.handle(message)).resolves.toBe('ack');
    const { entries } = await audit.list(callerOf(['admin']), TOKEN, 10, '');
    expect(entries.map((entry) => entry.action)).toEqual(['user.disabled']);
  });

  it('keeps no secret of an event (the reset token stays out of the audit)', async () => {
    const { message } = delivered(
      PASSWORD_RESET_REQUESTED,
      {
        user_id: TARGET,
        org_id: ORG,
        email: 'ada@example.test',
        display_name: 'Ada',
        locale: 'en',
        token: 'one-time-secret-token',
        expires_at: '2026-11-24T10:00:00.000Z',
      },
      { actor_id: ADMIN },
    );
    await expect(consumer.handle(message)).resolves.toBe('ack');
    const stored = JSON.stringify(await database.query('SELECT * FROM admin_audit'));
    expect(stored).toContain('user.password_reset_requested');
    expect(stored).not.toContain('one-time-secret-token');
  });

  it('records a reset link handed to the admin (send_email: false) as its own action', async () => {
    const { event, message } = delivered(PASSWORD_RESET_ISSUED, { user_id: TARGET, org_id: ORG }, { actor_id: ADMIN });
    await expect(consumer.handle(message)).resolves.toBe('ack');
    const { entries } = await audit.list(callerOf(['admin']), TOKEN, 10, '');
    expect(entries).toEqual([
      expect.objectContaining({
        id: event.id,
        actorId: ADMIN,
        action: 'user.password_reset_issued',
        targetType: 'user',
        targetId: TARGET,
      }),
    ]);
  });

  it('acknowledges events that are no admin action without recording them, and rejects malformed ones', async () => {
    const activated = delivered(USER_ACTIVATED, { user_id: TARGET, org_id: ORG });
    await expect(consumer.handle(activated.message)).resolves.toBe('ack');
    const malformed = delivered(USER_ENABLED, { user_id: 'not-a-uuid', org_id: ORG });
    await expect(consumer.handle(malformed.message)).resolves.toBe('reject');
    expect(await database.query('SELECT id FROM admin_audit')).toEqual([]);
  });

  it("records auth's own actions directly, with the request id of the request in hand", async () => {
    await runInRequestContext({ requestId: 'req-revoke-7' }, () =>
      audit.record({
        orgId: ORG,
        actorId: ADMIN,
        action: ADMIN_ACTIONS.sessionRevoked,
        targetType: 'session',
        targetId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
      }),
    );
    const { entries } = await audit.list(callerOf(['admin']), TOKEN, 10, '');
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'session.revoked',
        actorId: ADMIN,
        requestId: 'req-revoke-7',
        detailsJson: '',
      }),
    ]);
  });

  it('pages newest first with an opaque cursor, neither skipping nor repeating while actions are added', async () => {
    const start = harness.clock.now();
    const add = (index: number) =>
      audit.record({
        orgId: ORG,
        actorId: ADMIN,
        action: ADMIN_ACTIONS.userEnabled,
        targetType: 'user',
        targetId: `target-${index}`,
        at: new Date(start + Math.floor(index / 2) * 1000), // two per millisecond value: ties broken by id
      });
    for (let index = 0; index < 7; index += 1) await add(index);
    const seen: string[] = [];
    let cursor = '';
    let added = 7;
    do {
      const page = await audit.list(callerOf(['admin']), TOKEN, 3, cursor);
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries.map((entry) => entry.targetId));
      cursor = page.nextCursor;
      await add(added); // newer than everything listed so far: never on a later page
      added += 1;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((index) => `target-${index}`));
    expect(seen[0]).toBe('target-6');
    expect(seen.slice(5).sort()).toEqual(['target-0', 'target-1']);
  });

  it("shows an org's admins their own org's actions only, and refuses anyone else", async () => {
    await audit.record({
      orgId: OTHER_ORG,
      actorId: ADMIN,
      action: 'user.disabled',
      targetType: 'user',
      targetId: TARGET,
    });
    expect((await audit.list(callerOf(['admin']), TOKEN, 10, '')).entries).toEqual([]);
    expect((await audit.list(callerOf(['admin'], OTHER_ORG), TOKEN, 10, '')).entries).toHaveLength(1);
    for (const roles of [['member'], ['viewer']]) {
      await expect(audit.list(callerOf(roles, OTHER_ORG), TOKEN, 10, '')).rejects.toMatchObject({ code: 'forbidden' });
    }
  });

  it('refuses both audits to an admin identity no longer holds for one, whatever its token says', async () => {
    await audit.record({ orgId: ORG, actorId: ADMIN, action: 'user.disabled', targetType: 'user', targetId: TARGET });
    // Disabled, deleted or demoted a moment ago: its token works until the revocation arrives (and
    // while NATS is down, until it is back).
    formerAdmins.add('former-admin-token');
    const logins = harness.get(LoginAudit);
    const loginQuery = { limit: 10, cursor: '', userId: '', outcome: '' };
    await expect(audit.list(callerOf(['admin']), 'former-admin-token', 10, '')).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(logins.list(callerOf(['admin']), 'former-admin-token', loginQuery)).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect((await audit.list(callerOf(['admin']), TOKEN, 10, '')).entries).toHaveLength(1);
    await expect(logins.list(callerOf(['admin']), TOKEN, loginQuery)).resolves.toHaveProperty('entries');
  });

  it('refuses an admin’s token without users:read (insufficient_scope), whichever transport calls it', async () => {
    const narrowed: Caller = { ...callerOf(['admin'], OTHER_ORG), scopes: new Set(['system:read']) };
    await expect(audit.list(narrowed, TOKEN, 10, '')).rejects.toMatchObject({ code: 'insufficient_scope' });
  });

  it('refuses a cursor it did not write and a limit outside 1–100', async () => {
    for (const cursor of ['nonsense', Buffer.from('["yesterday","x"]').toString('base64url')]) {
      await expect(audit.list(callerOf(['admin']), TOKEN, 10, cursor)).rejects.toMatchObject({
        code: 'validation_failed',
      });
    }
    await expect(audit.list(callerOf(['admin']), TOKEN, 101, '')).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('refuses a well-formed cursor whose time Postgres cannot hold with validation_failed, not a database error', async () => {
    for (const at of ['0000-01-01T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '-005000-01-01T00:00:00.000Z']) {
      const cursor = Buffer.from(JSON.stringify([at, TARGET])).toString('base64url');
      await expect(audit.list(callerOf(['admin']), TOKEN, 10, cursor)).rejects.toMatchObject({
        code: 'validation_failed',
      });
    }
    for (const at of ['0001-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z']) {
      const cursor = Buffer.from(JSON.stringify([at, TARGET])).toString('base64url');
      await expect(audit.list(callerOf(['admin']), TOKEN, 10, cursor)).resolves.toHaveProperty('entries');
    }
  });
});
