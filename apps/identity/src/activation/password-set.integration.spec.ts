import { INTERNAL_IDENTITY_SCOPE, scopesOfRoles } from '@acct/access-token';
import { PASSWORD_RESET_ISSUED, PASSWORD_RESET_REQUESTED, USER_ACTIVATED, USER_PASSWORD_CHANGED } from '@acct/events';

import { VerifyPasswordService } from '../credentials/verify-password.service';
import { PasswordHasher } from '../passwords/password-hasher';
import { PrismaService } from '../prisma/prisma.service';
import { callerOf, domainFailure, IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserService } from '../users/create-user.service';
import { DeleteUserService } from '../users/delete-user.service';
import { UpdateUserService } from '../users/update-user.service';
import { UserStatusService } from '../users/user-status.service';
import { PasswordSetService } from './password-set.service';

jest.setTimeout(120_000);

/** Contract §3: activation and reset links, one-time password:set credentials (real Postgres). */
describe('password set (activation and reset links)', () => {
  let identity: IdentityHarness;
  let passwords: PasswordSetService;
  let acme: SeededOrg;
  let sequence = 0;

  const newUser = async () => {
    sequence += 1;
    const { user } = await identity.get(CreateUserService).create(acme.admin, {
      email: `reset${sequence}@acme.example.com`,
      displayName: `Reset ${sequence}`,
      roles: [],
      sendActivation: false,
      requestFingerprint: '',
    });
    return user;
  };
  const resetLink = async (userId: string) => (await passwords.requestReset(acme.admin, userId, false)).token;

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    passwords = identity.get(PasswordSetService);
    acme = await identity.seedOrg('acme');
  });

  afterAll(async () => {
    await identity?.close();
  });

  /**
   * Holds `lockStatement` in a transaction of its own until `release()`: the concurrent work that
   * needs the same lock queues behind it, so a test decides the order in which two operations meet.
   */
  const holdLock = async (lockStatement: (db: PrismaService) => Promise<unknown>) => {
    const prisma = identity.get(PrismaService);
    let release = () => {};
    let locked = () => {};
    const held = new Promise<void>((resolve) => (locked = resolve));
    const done = prisma.$transaction(
      async (tx) => {
        await lockStatement(tx as unknown as PrismaService);
        locked();
        await new Promise<void>((resolve) => (release = resolve));
      },
      { timeout: 60_000 },
    );
    await held;
    return {
      release: async () => {
        release();
        await done;
      },
    };
  };
  /** Resolves once `count` other statements of this database wait for a lock. */
  const lockWaiters = async (count: number) => {
    const prisma = identity.get(PrismaService);
    for (let attempt = 0; attempt < 400; attempt += 1) {
      const [{ waiting }] = await prisma.$queryRaw<{ waiting: number }[]>`
        SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (waiting >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`fewer than ${count} statements waited for a lock`);
  };
  const settled = (promise: Promise<unknown>) =>
    promise.then(
      () => 'done',
      (error: unknown) => (error as { code?: string }).code ?? `unexpected: ${String(error)}`,
    );

  it("replaces the user's older links with a new one, and leaves other users' links alone", async () => {
    const user = await newUser();
    const older = await resetLink(user.id);
    const othersLink = await resetLink((await newUser()).id);
    const newer = await resetLink(user.id);

    expect((await domainFailure(passwords.checkToken(older))).code).toBe('unauthenticated');
    expect((await domainFailure(passwords.setPassword(older, 'the-old-link-pass-1'))).code).toBe('unauthenticated');
    await expect(passwords.checkToken(newer)).resolves.toBeUndefined();
    await expect(passwords.checkToken(othersLink)).resolves.toBeUndefined();
  });

  it('leaves exactly one working link when several resets of one user run at once', async () => {
    const user = await newUser();
    const links = await Promise.all(Array.from({ length: 10 }, () => resetLink(user.id)));

    const working = await Promise.all(
      links.map((link) =>
        passwords.checkToken(link).then(
          () => true,
          () => false,
        ),
      ),
    );
    expect(working.filter(Boolean)).toHaveLength(1);
  });

  it('consumes the link that set the password, and no older link of the user works after it', async () => {
    const user = await newUser();
    const older = await resetLink(user.id);
    const newer = await resetLink(user.id);
    const another = (await newUser()).id;
    const othersLink = await resetLink(another);

    await passwords.setPassword(newer, 'the-new-password-1');

    for (const link of [older, newer]) {
      expect((await domainFailure(passwords.checkToken(link))).code).toBe('unauthenticated');
      expect((await domainFailure(passwords.setPassword(link, 'the-old-link-pass-1'))).code).toBe('unauthenticated');
    }
    // Another user's link is not touched.
    await expect(passwords.checkToken(othersLink)).resolves.toBeUndefined();
  });

  it('records who took a link handed to the caller (an event for the admin audit), and never the link', async () => {
    const user = await newUser();
    const link = await resetLink(user.id);
    const issued = (await identity.get(PrismaService).outboxEvent.findMany({ where: { type: PASSWORD_RESET_ISSUED } }))
      .map((event) => event.payload as { actor_id?: string; data: Record<string, unknown> })
      .filter((event) => event.data.user_id === user.id);
    expect(issued).toEqual([
      expect.objectContaining({ actor_id: acme.admin.subject, data: { user_id: user.id, org_id: acme.orgId } }),
    ]);
    expect(JSON.stringify(issued)).not.toContain(link);
  });

  it("mails a pending user's link as its activation (interface §3: how an account created without the e-mail gets one), an active user's as a reset", async () => {
    const resetMails = async (userId: string) =>
      (await identity.get(PrismaService).outboxEvent.findMany({ where: { type: PASSWORD_RESET_REQUESTED } }))
        .map((event) => (event.payload as { data: Record<string, unknown> }).data)
        .filter((data) => data.user_id === userId);
    const pending = await newUser();
    await passwords.requestReset(acme.admin, pending.id, true);
    expect(await resetMails(pending.id)).toEqual([expect.objectContaining({ activation: true })]);

    const active = await newUser();
    await passwords.setPassword(await resetLink(active.id), 'an-active-pass-1');
    await passwords.requestReset(acme.admin, active.id, true);
    expect(await resetMails(active.id)).toEqual([expect.objectContaining({ activation: false })]);

    // Disabled before it ever set a password: its link is still its activation, not a reset of a
    // password it never had (using it activates the account, identity.user.activated).
    const neverActivated = await newUser();
    await identity.get(UserStatusService).disable(acme.admin, neverActivated.id, []);
    await passwords.requestReset(acme.admin, neverActivated.id, true);
    expect(await resetMails(neverActivated.id)).toEqual([expect.objectContaining({ activation: true })]);
    const once = await newUser();
    await passwords.setPassword(await resetLink(once.id), 'an-active-pass-2');
    await identity.get(UserStatusService).disable(acme.admin, once.id, []);
    await passwords.requestReset(acme.admin, once.id, true);
    expect(await resetMails(once.id)).toEqual([expect.objectContaining({ activation: false })]);
  });

  it('announces the activation, once, of a user that used its first link while disabled (enabled again, it is active)', async () => {
    const activations = async (userId: string) =>
      (await identity.get(PrismaService).outboxEvent.findMany({ where: { type: USER_ACTIVATED } }))
        .map((event) => (event.payload as { data: Record<string, unknown> }).data)
        .filter((data) => data.user_id === userId);
    const user = await newUser();
    await identity.get(UserStatusService).disable(acme.admin, user.id, []);
    // A link issued after the disable (the disable retires those issued before).
    await passwords.setPassword(await resetLink(user.id), 'set-while-disabled-1');
    const enabled = await identity.get(UserStatusService).enable(acme.admin, user.id, []);
    // From pending to active by its own link: a consumer of identity.user.activated (docs/events.md,
    // exactly once per user) never heard of this one.
    expect(enabled.status).toBe('active');
    expect(await activations(user.id)).toEqual([{ user_id: user.id, org_id: acme.orgId }]);

    // Once: neither another password nor another disable and enable announces it again.
    await identity.get(UserStatusService).disable(acme.admin, user.id, []);
    await passwords.setPassword(await resetLink(user.id), 'set-while-disabled-2');
    await identity.get(UserStatusService).enable(acme.admin, user.id, []);
    expect(await activations(user.id)).toHaveLength(1);
  });

  it('takes a link asked for after the password was set', async () => {
    const user = await newUser();
    await passwords.setPassword(await resetLink(user.id), 'first-password-1');
    const later = await resetLink(user.id);
    await expect(passwords.setPassword(later, 'second-password-1')).resolves.toMatchObject({ id: user.id });
  });

  it('ends the sessions of every login that still got in with the old password while the new one was hashed', async () => {
    const user = await newUser();
    const email = `reset${sequence}@acme.example.com`;
    await passwords.setPassword(await resetLink(user.id), 'the-old-password-1');
    const link = await resetLink(user.id);
    const hasher = identity.get(PasswordHasher);
    const hash = hasher.hash.bind(hasher);
    const auth = callerOf('client', 'auth', acme.orgId, [INTERNAL_IDENTITY_SCOPE]);
    // A login checked while the new password is hashed (argon2 takes its time) still finds the old one.
    let loginCheckedAt = 0;
    const spy = jest.spyOn(hasher, 'hash').mockImplementationOnce(async (password) => {
      const hashed = await hash(password);
      identity.clock.advance(500);
      loginCheckedAt = identity.clock.now();
      expect((await identity.get(VerifyPasswordService).verify(auth, email, 'the-old-password-1')).valid).toBe(true);
      identity.clock.advance(500);
      return hashed;
    });
    try {
      await passwords.setPassword(link, 'the-new-password-1');
    } finally {
      spy.mockRestore();
    }

    const [changed] = (
      await identity.get(PrismaService).outboxEvent.findMany({
        where: { type: USER_PASSWORD_CHANGED },
        orderBy: { createdAt: 'desc' },
      })
    )
      .map((event) => event.payload as { data: { user_id: string; occurred_at: string } })
      .filter((event) => event.data.user_id === user.id);
    // Auth ends the sessions begun before occurred_at: that login's must be one of them.
    expect(Date.parse(changed.data.occurred_at)).toBeGreaterThan(loginCheckedAt);
  });

  it('gives no link to an admin that an earlier change disabled, deleted or demoted, whatever its token says', async () => {
    const admins: string[] = [];
    for (const name of ['disabled', 'deleted', 'demoted']) {
      const { user } = await identity.get(CreateUserService).create(acme.admin, {
        email: `${name}-resetter@acme.example.com`,
        displayName: name,
        roles: ['admin'],
        requestFingerprint: '',
      });
      await identity.get(PrismaService).user.update({ where: { id: user.id }, data: { status: 'active' } });
      admins.push(user.id);
    }
    const [disabled = '', deleted = '', demoted = ''] = admins;
    await identity.get(UserStatusService).disable(acme.admin, disabled, []);
    await identity.get(DeleteUserService).delete(acme.admin, deleted, []);
    await identity.get(UpdateUserService).update(acme.admin, demoted, [], { roles: ['member'] });
    const target = await newUser();
    const before = await identity.get(PrismaService).passwordSetToken.count({ where: { userId: target.id } });

    for (const id of [disabled, deleted, demoted]) {
      // Its access token still says admin (auth revokes it up to a second later, or once NATS is back).
      const stale = callerOf('user', id, acme.orgId, scopesOfRoles(['admin']), ['admin']);
      expect(await settled(passwords.requestReset(stale, target.id, false))).toBe('forbidden');
      expect(await settled(passwords.requestReset(stale, acme.adminUserId, true))).toBe('forbidden');
    }
    expect(await identity.get(PrismaService).passwordSetToken.count({ where: { userId: target.id } })).toBe(before);
  });

  it('gives no link for a user deleted while the link was being issued (404), and leaves none behind', async () => {
    const user = await newUser();
    // Hold the issuing lock so the reset stops after it found the user; the user is deleted meanwhile.
    const issuing = await holdLock(
      (db) => db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`password-set-tokens:${user.id}`}))`,
    );
    const reset = settled(passwords.requestReset(acme.admin, user.id, false));
    await lockWaiters(1);
    await identity.get(DeleteUserService).delete(acme.admin, user.id, []);
    await issuing.release();

    expect(await reset).toBe('not_found');
    expect(await identity.get(PrismaService).passwordSetToken.count({ where: { userId: user.id } })).toBe(0);
  });

  it('lets a deletion and a use of the user’s link meet without a deadlock: the link is then refused (401)', async () => {
    const user = await newUser();
    const link = await resetLink(user.id);
    // Both queue on the user's row: the deletion first, then the use of the link.
    const row = await holdLock((db) => db.$queryRaw`SELECT id FROM users WHERE id = ${user.id}::uuid FOR UPDATE`);
    const deletion = settled(identity.get(DeleteUserService).delete(acme.admin, user.id, []));
    await lockWaiters(1);
    const use = settled(passwords.setPassword(link, 'set-while-deleted-1'));
    await lockWaiters(2);
    await row.release();

    expect({ deletion: await deletion, use: await use }).toEqual({ deletion: 'done', use: 'unauthenticated' });
  });
});
