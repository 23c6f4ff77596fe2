import { Caller, scopesOfRoles } from '@acct/access-token';
import { passwordResetRequested, userCreated, userDeleted, userDisabled, userEnabled, userUpdated } from '@acct/events';

import { PasswordSetService } from '../activation/password-set.service';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PrismaService } from '../prisma/prisma.service';
import { Transactions } from '../prisma/transactions';
import { callerOf, domainFailure, IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserCommand, CreateUserService } from './create-user.service';
import { DeleteUserService } from './delete-user.service';
import { GetUserService } from './get-user.service';
import { ListUsersQuery, ListUsersService } from './list-users.service';
import { UpdateUserService } from './update-user.service';
import { UserStatusService } from './user-status.service';

jest.setTimeout(120_000);

const failure = domainFailure;

describe('Administration of an org’s users against Postgres (contract §7)', () => {
  let identity: IdentityHarness;
  let prisma: PrismaService;
  let creator: CreateUserService;
  let lists: ListUsersService;
  let updates: UpdateUserService;
  let statuses: UserStatusService;
  let deletes: DeleteUserService;
  let reads: GetUserService;
  let acme: SeededOrg;
  let globex: SeededOrg;
  let sequence = 0;

  const userCaller = (id: string, orgId: string, role: 'admin' | 'member' | 'viewer'): Caller =>
    callerOf('user', id, orgId, scopesOfRoles([role]), [role]);

  /** A user of `org`, created by its admin; each a second later than the one before. */
  const create = async (org: SeededOrg, overrides: Partial<CreateUserCommand> = {}) => {
    sequence += 1;
    identity.clock.advance(1000);
    const { user } = await creator.create(org.admin, {
      email: `user${sequence}@${org === acme ? 'acme' : 'globex'}.example.com`,
      displayName: `User ${sequence}`,
      roles: [],
      requestFingerprint: '',
      ...overrides,
    });
    return user;
  };

  /** An active admin of `org`, made by the org's admin; its id. */
  const activeAdmin = async (org: SeededOrg, email: string, displayName: string) => {
    const { user } = await creator.create(org.admin, { email, displayName, roles: ['admin'], requestFingerprint: '' });
    await prisma.user.update({ where: { id: user.id }, data: { status: 'active' } });
    return user.id;
  };

  /**
   * Three admins of `org` that its admin then disabled, deleted and demoted, in that order: their
   * callers, whose tokens still say admin.
   */
  const staleAdmins = async (org: SeededOrg, domain: string) => {
    const [disabled, deleted, demoted] = [
      await activeAdmin(org, `disabled@${domain}`, 'disabled'),
      await activeAdmin(org, `deleted@${domain}`, 'deleted'),
      await activeAdmin(org, `demoted@${domain}`, 'demoted'),
    ];
    await statuses.disable(org.admin, disabled, []);
    await deletes.delete(org.admin, deleted, []);
    await updates.update(org.admin, demoted, [], { roles: ['member'] });
    return [disabled, deleted, demoted].map((id) => userCaller(id, org.orgId, 'admin'));
  };

  const list = (caller: Caller, query: Partial<ListUsersQuery> = {}) =>
    lists.list(caller, { status: '', q: '', limit: 0, cursor: '', ...query });

  /** Every page, following next_cursor; `between` runs after each page. */
  const everyPage = async (caller: Caller, query: Partial<ListUsersQuery>, between?: () => Promise<unknown>) => {
    const ids: string[] = [];
    let cursor = '';
    do {
      const page = await list(caller, { ...query, cursor });
      ids.push(...page.users.map((user) => user.id));
      cursor = page.nextCursor;
      await between?.();
    } while (cursor !== '');
    return ids;
  };

  const eventsOf = async (type: string, userId: string) =>
    (await prisma.outboxEvent.findMany({ where: { type } })).filter(
      (event) => (event.payload as { data: { user_id: string } }).data.user_id === userId,
    );

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    prisma = identity.get(PrismaService);
    creator = identity.get(CreateUserService);
    lists = identity.get(ListUsersService);
    updates = identity.get(UpdateUserService);
    statuses = identity.get(UserStatusService);
    deletes = identity.get(DeleteUserService);
    reads = identity.get(GetUserService);
    acme = await identity.seedOrg('acme');
    globex = await identity.seedOrg('globex');
  });

  afterAll(async () => {
    await identity?.close();
  });

  describe('who may administer', () => {
    it('refuses members and viewers with forbidden, and tokens without the scope with insufficient_scope', async () => {
      const member = await create(acme, { roles: ['member'] });
      const viewer = await create(acme, { roles: ['viewer'] });
      for (const caller of [userCaller(member.id, acme.orgId, 'member'), userCaller(viewer.id, acme.orgId, 'viewer')]) {
        expect((await failure(list(caller))).code).toBe('forbidden');
        expect((await failure(statuses.disable(caller, member.id, []))).code).toMatch(/forbidden|insufficient_scope/);
      }
      const memberCaller = userCaller(member.id, acme.orgId, 'member');
      expect((await failure(updates.update(memberCaller, viewer.id, [], { displayName: 'x' }))).code).toBe(
        'insufficient_scope',
      );
      const readOnlyAdmin = { ...acme.admin, scopes: new Set(['users:read']) };
      expect((await failure(deletes.delete(readOnlyAdmin, viewer.id, []))).code).toBe('insufficient_scope');
      expect((await reads.get(acme.admin, viewer.id)).status).toBe('pending');
    });

    it('answers another org’s admin not_found for every change, as for a user that does not exist, and lists it nothing of ours', async () => {
      const target = await create(acme);
      const attempts = [
        updates.update(globex.admin, target.id, [], { displayName: 'Taken over' }),
        statuses.disable(globex.admin, target.id, []),
        statuses.enable(globex.admin, target.id, []),
        deletes.delete(globex.admin, target.id, []),
      ];
      for (const attempt of attempts) {
        const error = await failure(attempt);
        expect(error.toPayload()).toEqual(
          (await failure(statuses.disable(globex.admin, crypto.randomUUID(), []))).toPayload(),
        );
      }
      expect(await reads.get(acme.admin, target.id)).toEqual(target);
      expect((await everyPage(globex.admin, {})).includes(target.id)).toBe(false);
    });

    it('lets an admin client (client_credentials) administer its own org', async () => {
      const client = callerOf('client', 'provisioner', acme.orgId, scopesOfRoles(['admin']), ['admin']);
      const target = await create(acme);
      expect((await statuses.disable(client, target.id, [])).status).toBe('disabled');
      expect((await list(client, { status: 'disabled' })).users.map((user) => user.id)).toContain(target.id);
    });
  });

  describe('ListUsers', () => {
    let org: SeededOrg;
    let admin: Caller;

    beforeAll(async () => {
      org = await identity.seedOrg('listing');
    });

    beforeEach(() => {
      admin = org.admin;
    });

    it('lists newest first, 20 by default, and pages with an opaque cursor without skipping or repeating', async () => {
      const created = [];
      for (let index = 0; index < 45; index += 1) {
        identity.clock.advance(1000);
        const { user } = await creator.create(admin, {
          email: `list${index}@listing.example.com`,
          displayName: `Lister ${index}`,
          roles: [],
          requestFingerprint: '',
        });
        created.push(user.id);
      }
      const first = await list(admin);
      expect(first.users).toHaveLength(20);
      expect(first.users.map((user) => user.id)).toEqual(created.slice(-20).reverse());
      expect(first.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      const all = await everyPage(admin, { limit: 7 });
      expect(all).toEqual([...created].reverse().concat(org.adminUserId));
    });

    it('neither skips nor repeats a user while users are created during paging; the new ones are not in later pages', async () => {
      const before = await everyPage(admin, { limit: 100 });
      const added: string[] = [];
      const paged = await everyPage(admin, { limit: 5 }, async () => {
        identity.clock.advance(1000);
        const { user } = await creator.create(admin, {
          email: `during${added.length}@listing.example.com`,
          displayName: 'Created while paging',
          roles: [],
          requestFingerprint: '',
        });
        added.push(user.id);
      });
      expect(paged).toEqual(before);
      expect(new Set(paged).size).toBe(paged.length);
      expect((await list(admin, { limit: 1 })).users[0]?.id).toBe(added.at(-1));
    });

    it('orders users created in the same millisecond by id, and pages through them exactly once', async () => {
      const sameInstant = [];
      for (let index = 0; index < 6; index += 1) {
        const { user } = await creator.create(admin, {
          email: `same${index}@listing.example.com`,
          displayName: 'Same instant',
          roles: [],
          requestFingerprint: '',
        });
        sameInstant.push(user.id);
      }
      const paged = await everyPage(admin, { q: 'same', limit: 2 });
      expect(paged).toEqual([...sameInstant].sort().reverse());
    });

    it('filters by status and by q (e-mail prefix or display_name substring, case-insensitive)', async () => {
      identity.clock.advance(1000);
      const { user: ada } = await creator.create(admin, {
        email: 'Ada.Lovelace@Listing.example.com',
        displayName: 'Countess of Lovelace',
        roles: [],
        requestFingerprint: '',
      });
      const { user: grace } = await creator.create(admin, {
        email: 'grace@listing.example.com',
        displayName: 'Grace 100% Hopper_',
        roles: [],
        requestFingerprint: '',
      });
      await statuses.disable(admin, grace.id, []);
      const ids = async (query: Partial<ListUsersQuery>) => (await everyPage(admin, query)).sort();
      expect(await ids({ q: 'ADA.L' })).toEqual([ada.id]);
      expect(await ids({ q: 'lovelace' })).toEqual([ada.id]);
      expect(await ids({ q: 'listing.example' })).toEqual([]);
      expect(await ids({ q: '100%' })).toEqual([grace.id]);
      expect(await ids({ q: '0% H' })).toEqual([grace.id]);
      expect(await ids({ q: '%' })).toEqual([grace.id]);
      expect(await ids({ q: 'r_' })).toEqual([grace.id]);
      expect(await ids({ status: 'disabled' })).toEqual([grace.id]);
      expect(await ids({ status: 'active' })).toEqual([org.adminUserId]);
      expect(await ids({ status: 'disabled', q: 'ada' })).toEqual([]);
    });

    /** A new org whose users are created by name alone, and its search by `q` (its admin left out). */
    const searchOrg = async (label: string) => {
      const search = await identity.seedOrg(label);
      return {
        named: async (displayName: string) => {
          sequence += 1;
          identity.clock.advance(1000);
          const { user } = await creator.create(search.admin, {
            email: `${label}${sequence}@search.example.com`,
            displayName,
            roles: [],
            requestFingerprint: '',
          });
          return user.id;
        },
        ids: async (q: string) => (await everyPage(search.admin, { q })).filter((id) => id !== search.adminUserId),
      };
    };

    it('finds a display_name by itself, in any case, whatever letters it holds (İ, a final Σ)', async () => {
      const { named, ids } = await searchOrg('search');
      const istanbul = await named('İstanbul Office');
      const nikos = await named('ΝΙΚΟΣ Παπαδόπουλος');
      expect(await ids('İstanbul')).toEqual([istanbul]);
      expect(await ids('office')).toEqual([istanbul]);
      expect(await ids('ΝΙΚΟΣ')).toEqual([nikos]);
      expect(await ids('νικοσ')).toEqual([nikos]);
    });

    it('finds a display_name however its letters are encoded: composed or with combining marks, full width', async () => {
      const { named, ids } = await searchOrg('unicode');
      const jose = await named('Jos\u00e9 M\u00fcller');
      const zoe = await named('Zoe\u0308 Ng');
      expect(await ids('jose\u0301')).toEqual([jose]);
      expect(await ids('MU\u0308LLER')).toEqual([jose]);
      expect(await ids('Zo\u00eb')).toEqual([zoe]);
      expect(await ids('\uff4e\uff47')).toEqual([zoe]);
      // The folding does not let a search match more than the name says: an accented e is not e.
      expect(await ids('Jose ')).toEqual([]);
    });

    it.each([
      [{ limit: 101 }, 'limit'],
      [{ limit: -1 }, 'limit'],
      [{ status: 'deleted' }, 'status'],
      [{ cursor: 'not-a-cursor' }, 'cursor'],
      [{ cursor: Buffer.from('{"t":1,"i":"x"}').toString('base64url') }, 'cursor'],
      [{ cursor: Buffer.from(`{"t":9000000000000000,"i":"${crypto.randomUUID()}"}`).toString('base64url') }, 'cursor'],
      [{ q: 'x'.repeat(255) }, 'q'],
    ])('refuses %j with validation_failed naming %s', async (query, field) => {
      const error = await failure(list(admin, query));
      expect(error.code).toBe('validation_failed');
      expect(error.options.errors?.map((entry) => entry.field)).toEqual([field]);
    });

    it('answers the limit asked for, from 1 to 100', async () => {
      expect((await list(admin, { limit: 1 })).users).toHaveLength(1);
      expect((await list(admin, { limit: 100 })).users.length).toBeGreaterThan(50);
    });

    it('answers an empty last page without a cursor', async () => {
      const everyone = await list(admin, { limit: 100 });
      const rest = await list(admin, { cursor: everyone.nextCursor || encodeLast(everyone.users.at(-1)) });
      expect(rest).toEqual({ users: [], nextCursor: '' });
    });
  });

  describe('UpdateUser', () => {
    it('applies a merge patch: only the members sent change, and null puts the profile back to its defaults', async () => {
      const user = await create(acme, { profile: { locale: 'en-GB', timezone: 'Europe/London' } });
      const updated = await updates.update(acme.admin, user.id, [], {
        displayName: '  Renamed  ',
        roles: ['viewer'],
        locale: null,
        phone: '+86 138-0013-8001',
      });
      expect(updated).toEqual({
        ...user,
        displayName: 'Renamed',
        roles: ['viewer'],
        phone: '+8613800138001',
        etag: expect.any(String),
      });
      const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
      expect(row).toMatchObject({ locale: 'zh-CN', timezone: 'Europe/London', phone: '+8613800138001' });
      const cleared = await updates.update(acme.admin, user.id, [], { phone: null, timezone: 'Asia/Tokyo' });
      expect(cleared.phone).toBeUndefined();
      expect(await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({
        phone: null,
        timezone: 'Asia/Tokyo',
      });
    });

    it('writes identity.user.updated with the changed fields, the roles before and after and the actor, and no event when nothing changed', async () => {
      const user = await create(acme, { displayName: 'Before' });
      const changed = await updates.update(acme.admin, user.id, [], {
        displayName: 'After',
        roles: ['viewer', 'member'],
      });
      const [event, ...more] = await eventsOf('identity.user.updated', user.id);
      expect(more).toEqual([]);
      const parsed = userUpdated.parse(event?.payload);
      expect(parsed.actor_id).toBe(acme.admin.subject);
      expect(parsed.data).toEqual({
        user_id: user.id,
        org_id: acme.orgId,
        changed: ['display_name', 'roles'],
        roles_before: ['member'],
        roles_after: ['viewer', 'member'],
      });
      const reordered = await updates.update(acme.admin, user.id, [], {
        displayName: 'After',
        roles: ['member', 'viewer'],
      });
      expect(await eventsOf('identity.user.updated', user.id)).toHaveLength(1);
      // Nothing changed, so nothing a client sees did: neither the roles as listed nor the ETag (an
      // admin holding it would be refused 412 for a change that was never made, and never audited).
      expect(reordered.roles).toEqual(['viewer', 'member']);
      expect(reordered.etag).toBe(changed.etag);
      expect((await reads.get(acme.admin, user.id)).etag).toBe(changed.etag);
    });

    it('changes the ETag with every change, also of fields the User does not show, and keeps it while nothing changes', async () => {
      const user = await create(acme);
      const read = await reads.get(acme.admin, user.id);
      expect(read.etag).toBe(user.etag);
      const relocated = await updates.update(acme.admin, user.id, [], { timezone: 'Europe/Paris' });
      expect(relocated.etag).not.toBe(user.etag);
      const same = await updates.update(acme.admin, user.id, [], { timezone: 'Europe/Paris' });
      expect(same.etag).toBe(relocated.etag);
    });

    it('applies a patch whose If-Match is current (or *), and refuses a stale one with precondition_failed, changing nothing', async () => {
      const user = await create(acme);
      const renamed = await updates.update(acme.admin, user.id, [user.etag ?? ''], { displayName: 'First' });
      const stale = await failure(updates.update(acme.admin, user.id, [user.etag ?? ''], { displayName: 'Second' }));
      expect(stale.code).toBe('precondition_failed');
      expect(stale.status).toBe(412);
      expect((await reads.get(acme.admin, user.id)).displayName).toBe('First');
      expect(
        (await updates.update(acme.admin, user.id, ['other', renamed.etag ?? ''], { displayName: 'Third' }))
          .displayName,
      ).toBe('Third');
      expect((await updates.update(acme.admin, user.id, ['*'], { displayName: 'Fourth' })).displayName).toBe('Fourth');
      expect((await failure(statuses.disable(acme.admin, user.id, [renamed.etag ?? '']))).code).toBe(
        'precondition_failed',
      );
      expect((await failure(deletes.delete(acme.admin, user.id, ['W/"x"']))).code).toBe('precondition_failed');
    });

    it('refuses a change whose If-None-Match is * or names the current ETag with precondition_failed, changing nothing', async () => {
      const user = await create(acme);
      const etag = user.etag ?? '';
      for (const ifNoneMatch of [['*'], [etag], ['other', etag]]) {
        const changes = [
          updates.update(acme.admin, user.id, [], { displayName: 'Changed' }, ifNoneMatch),
          statuses.disable(acme.admin, user.id, [], ifNoneMatch),
          statuses.enable(acme.admin, user.id, [], ifNoneMatch),
          deletes.delete(acme.admin, user.id, [], ifNoneMatch),
        ];
        for (const change of changes) expect((await failure(change)).code).toBe('precondition_failed');
      }
      expect(await reads.get(acme.admin, user.id)).toEqual(user);
      const renamed = await updates.update(acme.admin, user.id, [], { displayName: 'Changed' }, ['an-old-state']);
      expect(renamed.displayName).toBe('Changed');
      // The tag it had before is no longer current: that condition now holds.
      expect((await statuses.disable(acme.admin, user.id, [], [etag])).status).toBe('disabled');
    });

    it('lets exactly one of two concurrent patches with the same If-Match through', async () => {
      const user = await create(acme);
      const results = await Promise.allSettled(
        ['One', 'Two'].map((displayName) => updates.update(acme.admin, user.id, [user.etag ?? ''], { displayName })),
      );
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((result) => result.status === 'rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: 'precondition_failed' });
    });

    it('checks every field with the rules of creation and lists every failing one', async () => {
      const user = await create(acme);
      const error = await failure(
        updates.update(acme.admin, user.id, [], {
          displayName: ' ',
          roles: ['owner', 'member', 'member'],
          locale: 'not a tag!',
          timezone: 'Mars/Olympus',
          phone: '13800138000',
        }),
      );
      expect(error.code).toBe('validation_failed');
      expect(error.options.errors?.map((entry) => entry.field).sort()).toEqual(
        ['display_name', 'phone', 'profile.locale', 'profile.timezone', 'roles', 'roles.0'].sort(),
      );
      expect((await failure(updates.update(acme.admin, user.id, [], { roles: [] }))).options.errors).toEqual([
        { field: 'roles', message: 'must name at least one role' },
      ]);
    });

    it('keeps the role ceiling, judged by the roles the caller holds now', async () => {
      const target = await create(acme);
      const demoted = await create(acme, { roles: ['admin'] });
      await updates.update(acme.admin, demoted.id, [], { roles: ['member'] });
      // Its token still says admin; the database says member: it may not grant admin.
      const staleAdmin = userCaller(demoted.id, acme.orgId, 'admin');
      expect((await failure(updates.update(staleAdmin, target.id, [], { roles: ['admin'] }))).code).toBe('forbidden');
      expect((await updates.update(acme.admin, target.id, [], { roles: ['admin'] })).roles).toEqual(['admin']);
    });

    it('refuses a phone another user has, in any spelling, in any org, with phone_taken', async () => {
      await create(globex, { phone: '+44 20 7946 0001' });
      const user = await create(acme);
      const error = await failure(updates.update(acme.admin, user.id, [], { phone: '0044-20-7946-0001' }));
      expect(error.code).toBe('phone_taken');
      expect(error.status).toBe(409);
    });

    it('gives one of a patch and a creation that take the same phone at once the phone, the other phone_taken', async () => {
      for (let round = 0; round < 20; round += 1) {
        const phone = `+44 20 7946 ${String(1000 + round)}`;
        const user = await create(acme);
        const results = await Promise.allSettled([
          updates.update(acme.admin, user.id, [], { phone }),
          create(acme, { phone }),
        ]);
        const refusals = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
        expect(refusals).toHaveLength(1);
        expect(refusals[0]).toMatchObject({ code: 'phone_taken' });
      }
    });

    it('refuses to take admin from the org’s last active admin (last_admin)', async () => {
      const org = await identity.seedOrg('demotion');
      const error = await failure(updates.update(org.admin, org.adminUserId, [], { roles: ['member'] }));
      expect(error.code).toBe('last_admin');
      expect(error.status).toBe(409);
    });
  });

  describe('DisableUser, EnableUser', () => {
    it('disables a user, writes identity.user.disabled in the same transaction, and enables it back to its status', async () => {
      const pending = await create(acme);
      const disabled = await statuses.disable(acme.admin, pending.id, []);
      expect(disabled).toEqual({ ...pending, status: 'disabled', etag: expect.any(String) });
      expect(disabled.etag).not.toBe(pending.etag);
      const [event] = await eventsOf('identity.user.disabled', pending.id);
      const parsed = userDisabled.parse(event?.payload);
      expect(parsed.data).toEqual({ user_id: pending.id, org_id: acme.orgId, occurred_at: parsed.occurred_at });
      expect(parsed.actor_id).toBe(acme.admin.subject);
      expect(await statuses.disable(acme.admin, pending.id, [])).toEqual(disabled);
      expect(await eventsOf('identity.user.disabled', pending.id)).toHaveLength(1);
      expect((await statuses.enable(acme.admin, pending.id, [])).status).toBe('pending');
      expect((await statuses.enable(acme.admin, pending.id, [])).status).toBe('pending');
      const enabled = await eventsOf('identity.user.enabled', pending.id);
      expect(enabled).toHaveLength(1); // the second enable changed nothing
      expect(userEnabled.parse(enabled[0]?.payload)).toMatchObject({
        actor_id: acme.admin.subject,
        data: { user_id: pending.id, org_id: acme.orgId },
      });

      const admin = await create(acme, { roles: ['admin'] });
      await prisma.user.update({ where: { id: admin.id }, data: { status: 'active', activatedAt: new Date() } });
      await statuses.disable(acme.admin, admin.id, []);
      expect((await statuses.enable(acme.admin, admin.id, [])).status).toBe('active');
    });

    it('retires the links a user held when disabled: who holds one cannot set the password it gets back on enabling', async () => {
      const passwords = identity.get(PasswordSetService);
      const user = await create(acme, { sendActivation: false });
      const before = (await passwords.requestReset(acme.admin, user.id, false)).token;
      await statuses.disable(acme.admin, user.id, []);
      expect((await failure(passwords.setPassword(before, 'a-new-password-1'))).code).toBe('unauthenticated');

      // A link the admin issues after the disable (to hand over on enabling) sets it; the user stays
      // disabled, and enabling it gives back an account that has set a password: active.
      const after = (await passwords.requestReset(acme.admin, user.id, false)).token;
      await passwords.setPassword(after, 'a-new-password-1');
      expect((await reads.get(acme.admin, user.id)).status).toBe('disabled');
      expect((await statuses.enable(acme.admin, user.id, [])).status).toBe('active');
    });

    it('refuses an admin disabling itself, and the last active admin, with last_admin', async () => {
      const org = await identity.seedOrg('lonely');
      expect((await failure(statuses.disable(org.admin, org.adminUserId, []))).code).toBe('last_admin');
      const client = callerOf('client', 'ops', org.orgId, scopesOfRoles(['admin']), ['admin']);
      expect((await failure(statuses.disable(client, org.adminUserId, []))).code).toBe('last_admin');
      expect((await failure(deletes.delete(client, org.adminUserId, []))).code).toBe('last_admin');
      expect((await reads.get(org.admin, 'me')).status).toBe('active');
    });

    it('leaves exactly one active admin when two admins disable each other at once', async () => {
      for (let round = 0; round < 5; round += 1) {
        const org = await identity.seedOrg(`pair-${round}`);
        const second = await creator.create(org.admin, {
          email: `second@pair-${round}.example.com`,
          displayName: 'Second admin',
          roles: ['admin'],
          requestFingerprint: '',
        });
        await prisma.user.update({ where: { id: second.user.id }, data: { status: 'active' } });
        const secondCaller = userCaller(second.user.id, org.orgId, 'admin');
        const results = await Promise.allSettled([
          statuses.disable(org.admin, second.user.id, []),
          statuses.disable(secondCaller, org.adminUserId, []),
        ]);
        expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        // The second is judged once its caller is disabled: no admin any more.
        expect((results.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
          code: 'forbidden',
        });
        expect(
          await prisma.user.count({ where: { orgId: org.orgId, status: 'active', roles: { has: 'admin' } } }),
        ).toBe(1);
      }
    });

    it('leaves one active admin when three admins delete and disable each other at once', async () => {
      const org = await identity.seedOrg('triangle');
      const others = [];
      for (const name of ['b', 'c']) {
        const { user } = await creator.create(org.admin, {
          email: `${name}@triangle.example.com`,
          displayName: name,
          roles: ['admin'],
          requestFingerprint: '',
        });
        await prisma.user.update({ where: { id: user.id }, data: { status: 'active' } });
        others.push(user.id);
      }
      const [b = '', c = ''] = others;
      await Promise.allSettled([
        deletes.delete(org.admin, b, []),
        statuses.disable(userCaller(b, org.orgId, 'admin'), c, []),
        deletes.delete(userCaller(c, org.orgId, 'admin'), org.adminUserId, []),
        statuses.disable(userCaller(c, org.orgId, 'admin'), b, []),
      ]);
      expect(await prisma.user.count({ where: { orgId: org.orgId, status: 'active', roles: { has: 'admin' } } })).toBe(
        1,
      );
    });

    // Two requests verified at once are judged one after the other under the org's lock: the second
    // one's token still says admin, but by then its holder was disabled, deleted or demoted.
    it('refuses a change by an admin that an earlier change disabled, deleted or demoted, whatever its token says', async () => {
      const org = await identity.seedOrg('stale-admins');
      const target = await create(org);
      for (const stale of await staleAdmins(org, 'stale-admins.example.com')) {
        const codes = [];
        for (const attempt of [
          () => updates.update(stale, target.id, [], { displayName: 'Taken over' }),
          () => statuses.disable(stale, target.id, []),
          () => deletes.delete(stale, target.id, []),
        ]) {
          codes.push(
            await attempt().then(
              () => 'done',
              (error: { code?: string }) => error.code,
            ),
          );
        }
        expect(codes).toEqual(['forbidden', 'forbidden', 'forbidden']);
      }
      expect(await reads.get(org.admin, target.id)).toEqual(target);
    });

    it('lists nothing to an admin that an earlier change disabled, deleted or demoted, whatever its token says', async () => {
      const org = await identity.seedOrg('stale-listers');
      const codes = [];
      for (const stale of await staleAdmins(org, 'stale-listers.example.com')) {
        codes.push(
          await list(stale).then(
            () => 'listed',
            (error: { code?: string }) => error.code,
          ),
        );
      }
      expect(codes).toEqual(['forbidden', 'forbidden', 'forbidden']);
    });

    // A creation grants roles too: an admin disabled while its token still works must not make itself
    // a new admin account, and one disabled while its creation runs waits for it (its row is locked).
    it('refuses a creation by an admin that an earlier change disabled, whatever its token says', async () => {
      const org = await identity.seedOrg('stale-creator');
      const creatorId = await activeAdmin(org, 'creator@stale-creator.example.com', 'Creator');
      const stale = userCaller(creatorId, org.orgId, 'admin');
      await statuses.disable(org.admin, creatorId, []);
      const error = await failure(
        creator.create(stale, {
          email: 'backdoor@stale-creator.example.com',
          displayName: 'Backdoor',
          roles: ['admin'],
          requestFingerprint: '',
        }),
      );
      expect(error.code).toBe('forbidden');
      expect(await prisma.user.count({ where: { emailNormalized: 'backdoor@stale-creator.example.com' } })).toBe(0);
    });

    // Only admins hold users:write: an admin demoted while its token still works (up to a second, and
    // while NATS is down until it is back) creates no more users, not even ones of its new role.
    it('refuses a creation by an admin that an earlier change demoted, whatever its token says', async () => {
      const org = await identity.seedOrg('demoted-creator');
      const creatorId = await activeAdmin(org, 'creator@demoted-creator.example.com', 'Creator');
      const stale = userCaller(creatorId, org.orgId, 'admin');
      await updates.update(org.admin, creatorId, [], { roles: ['member'] });
      const error = await failure(
        creator.create(stale, {
          email: 'another@demoted-creator.example.com',
          displayName: 'Another',
          roles: ['member'],
          requestFingerprint: '',
        }),
      );
      expect(error.code).toBe('forbidden');
      expect(await prisma.user.count({ where: { emailNormalized: 'another@demoted-creator.example.com' } })).toBe(0);
    });

    it('judges a creation and a disable of its creator at once one after the other, with no other outcome', async () => {
      for (let round = 0; round < 10; round += 1) {
        const org = await identity.seedOrg(`creating-admin-${round}`);
        const { user } = await creator.create(org.admin, {
          email: `creator@creating-admin-${round}.example.com`,
          displayName: 'Creator',
          roles: ['admin'],
          requestFingerprint: '',
        });
        await prisma.user.update({ where: { id: user.id }, data: { status: 'active' } });
        const [disabled, created] = await Promise.allSettled([
          statuses.disable(org.admin, user.id, []),
          creator.create(userCaller(user.id, org.orgId, 'admin'), {
            email: `new@creating-admin-${round}.example.com`,
            displayName: 'New',
            roles: ['admin'],
            requestFingerprint: '',
          }),
        ]);
        expect(disabled.status).toBe('fulfilled');
        if (created.status === 'rejected') expect(created.reason).toMatchObject({ code: 'forbidden' });
      }
    });
  });

  describe('DeleteUser', () => {
    it('deletes the user, frees its e-mail and phone, and writes identity.user.deleted in the same transaction', async () => {
      const user = await create(acme, { email: 'Leaving@Acme.example.com', phone: '+33 6 12 34 56 78' });
      await prisma.passwordSetToken.create({
        data: {
          id: crypto.randomUUID(),
          userId: user.id,
          tokenHash: `hash-${user.id}`,
          expiresAt: new Date(Date.now() + 1e6),
        },
      });
      await deletes.delete(acme.admin, user.id, [user.etag ?? '']);
      expect((await failure(reads.get(acme.admin, user.id))).code).toBe('not_found');
      expect((await failure(deletes.delete(acme.admin, user.id, []))).code).toBe('not_found');
      expect(await prisma.passwordSetToken.count({ where: { userId: user.id } })).toBe(0);
      const [event] = await eventsOf('identity.user.deleted', user.id);
      expect(userDeleted.parse(event?.payload)).toMatchObject({
        actor_id: acme.admin.subject,
        data: { user_id: user.id, org_id: acme.orgId },
      });
      const again = await create(globex, { email: 'leaving@acme.example.com', phone: '+33612345678' });
      expect(again).toMatchObject({ email: 'leaving@acme.example.com', phone: '+33612345678' });
    });

    it('publishes its mails still in the outbox without their links: no mail brings a dead link to an address without an account', async () => {
      // The broker is away (the harness has none): the user's activation and reset mails wait in the outbox.
      const user = await create(acme, { email: 'typo@acme.example.com', sendActivation: true });
      const kept = await create(acme, { email: 'kept@acme.example.com', sendActivation: true });
      await identity.get(PasswordSetService).requestReset(acme.admin, user.id, true);
      await deletes.delete(acme.admin, user.id, []);
      // What the relay publishes once the broker is back.
      const batch = await identity.get(Transactions).run((db) => identity.get(OutboxRepository).lockBatch(db, 1000));
      const published = (type: string, userId: string) =>
        batch.find((row) => row.type === type && (row.payload as { data: { user_id: string } }).data.user_id === userId)
          ?.payload;
      // Still the admin's actions, for the audit, but without a link: the mailer sends nothing for them.
      const created = userCreated.parse(published('identity.user.created', user.id));
      expect(created.data).toMatchObject({ user_id: user.id, email: 'typo@acme.example.com' });
      expect(created.data.activation_token).toBeUndefined();
      const reset = passwordResetRequested.parse(published('identity.user.password_reset_requested', user.id));
      expect(reset.data).toMatchObject({ user_id: user.id });
      expect(reset.data.token).toBeUndefined();
      expect(userCreated.parse(published('identity.user.created', kept.id)).data.activation_token).toEqual(
        expect.any(String),
      );
    });
  });

  describe('phone at creation', () => {
    it('stores the E.164 form of every spelling and answers it in the User', async () => {
      const spellings = ['+86 139-0013-8000', '0086 139 0013 8001', '+86 (139) 0013-8002', '+8613900138003'];
      const users = [];
      for (const phone of spellings) users.push(await create(acme, { phone }));
      expect(users.map((user) => user.phone)).toEqual([
        '+8613900138000',
        '+8613900138001',
        '+8613900138002',
        '+8613900138003',
      ]);
      expect((await reads.get(acme.admin, users[0]?.id ?? '')).phone).toBe('+8613900138000');
      expect((await create(acme)).phone).toBeUndefined();
    });

    it('refuses a national number without a country code, and a taken phone in another spelling', async () => {
      const national = await failure(create(acme, { phone: '139 0013 8010' }));
      expect(national.options.errors).toEqual([{ field: 'phone', message: expect.stringContaining('country code') }]);
      await create(acme, { phone: '+8613900138011' });
      expect((await failure(create(globex, { phone: '0086-139-0013-8011' }))).code).toBe('phone_taken');
    });
  });
});

/** A cursor just after `user`, built as the service builds them (for the empty last page). */
function encodeLast(user: { createdAt: string; id: string } | undefined): string {
  if (!user) throw new Error('no user');
  return Buffer.from(JSON.stringify({ t: Date.parse(user.createdAt), i: user.id })).toString('base64url');
}
