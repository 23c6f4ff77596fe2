import { scopesOfRoles } from '@acct/access-token';
import { DomainError } from '@acct/problem';

import { PrismaService } from '../prisma/prisma.service';
import { callerOf, IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserCommand, CreateUserService } from './create-user.service';

jest.setTimeout(60_000);

const failure = async (promise: Promise<unknown>): Promise<DomainError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
};

describe('CreateUser against Postgres', () => {
  let identity: IdentityHarness;
  let service: CreateUserService;
  let prisma: PrismaService;
  let acme: SeededOrg;
  let globex: SeededOrg;

  const command = (overrides: Partial<CreateUserCommand> = {}): CreateUserCommand => ({
    email: 'Someone@Example.com',
    displayName: 'Someone',
    roles: [],
    requestFingerprint: '',
    ...overrides,
  });

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    service = identity.get(CreateUserService);
    prisma = identity.get(PrismaService);
    acme = await identity.seedOrg('acme');
    globex = await identity.seedOrg('globex');
  });

  afterAll(async () => {
    await identity?.close();
  });

  it('creates a pending user with the defaults and answers it as the contract shows it', async () => {
    const before = identity.clock.date();
    const { user, replayed } = await service.create(
      acme.admin,
      command({ email: '  Ada.Lovelace@Example.COM ', displayName: '  Ada  ', password: 'correct horse' }),
    );
    expect(replayed).toBe(false);
    expect(user).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      orgId: acme.orgId,
      email: 'Ada.Lovelace@Example.COM',
      displayName: 'Ada',
      status: 'pending',
      roles: ['member'],
      createdAt: before.toISOString(),
      etag: expect.stringMatching(/^[A-Za-z0-9_-]{27}$/),
    });
    const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row).toMatchObject({
      emailNormalized: 'ada.lovelace@example.com',
      locale: 'zh-CN',
      timezone: 'Asia/Shanghai',
      activatedAt: null,
    });
    expect(row.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('stores the profile and no password hash when no password is given', async () => {
    const { user } = await service.create(
      acme.admin,
      command({
        email: 'profile@example.com',
        roles: ['viewer'],
        profile: { locale: 'en-us', timezone: 'Europe/Paris' },
      }),
    );
    const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row).toMatchObject({ locale: 'en-US', timezone: 'Europe/Paris', passwordHash: null, roles: ['viewer'] });
  });

  it('lists every failing field at once', async () => {
    const error = await failure(
      service.create(
        acme.admin,
        command({
          email: 'not-an-email',
          displayName: ' ',
          password: 'short',
          roles: ['owner', 'member', 'member'],
          profile: { locale: 'no such tag!', timezone: 'Mars/Olympus' },
        }),
      ),
    );
    expect(error.code).toBe('validation_failed');
    expect(error.options.errors?.map((entry) => entry.field).sort()).toEqual(
      ['display_name', 'email', 'password', 'profile.locale', 'profile.timezone', 'roles', 'roles.0'].sort(),
    );
  });

  it('refuses a caller without users:write with insufficient_scope', async () => {
    const reader = { ...acme.admin, scopes: new Set(['users:read']) };
    const error = await failure(service.create(reader, command({ email: 'scope@example.com' })));
    expect(error.code).toBe('insufficient_scope');
    expect(error.options.headers?.['WWW-Authenticate']).toContain('scope="users:write"');
  });

  it("refuses to create a user in another org than the caller's", async () => {
    const error = await failure(
      service.create(acme.admin, command({ email: 'cross@example.com', orgId: globex.orgId })),
    );
    expect(error.code).toBe('forbidden');
    expect(await prisma.user.count({ where: { emailNormalized: 'cross@example.com' } })).toBe(0);
  });

  it('accepts org_id when it names the caller’s own org', async () => {
    const { user } = await service.create(acme.admin, command({ email: 'own@example.com', orgId: acme.orgId }));
    expect(user.orgId).toBe(acme.orgId);
  });

  it('refuses to grant a role above the caller’s own, judged by the caller’s current roles in the database', async () => {
    const { user: member } = await service.create(acme.admin, command({ email: 'member@example.com' }));
    await prisma.user.update({ where: { id: member.id }, data: { status: 'active' } });
    // The member's token claims admin: the database says member, and the database wins. A member's
    // roles do not carry users:write, so it creates no user at all, not even one below its own role.
    const memberCaller = callerOf('user', member.id, acme.orgId, ['users:write'], ['admin']);
    for (const roles of [['admin'], ['viewer']]) {
      const email = `x-${roles[0]}@example.com`;
      expect((await failure(service.create(memberCaller, command({ email, roles })))).code).toBe('forbidden');
      expect(await prisma.user.count({ where: { emailNormalized: email } })).toBe(0);
    }
  });

  it('refuses a user caller that does not exist in its org', async () => {
    const ghost = callerOf('user', globex.adminUserId, acme.orgId, ['users:write'], ['admin']);
    expect((await failure(service.create(ghost, command({ email: 'ghost@example.com' })))).code).toBe('forbidden');
  });

  it('judges a client caller by the roles of the client', async () => {
    const client = (roles: string[]) => callerOf('client', 'provisioner', acme.orgId, ['users:write'], roles);
    expect(
      (await failure(service.create(client(['member']), command({ email: 'c1@example.com', roles: ['admin'] })))).code,
    ).toBe('forbidden');
    const { user } = await service.create(client(['admin']), command({ email: 'c2@example.com', roles: ['admin'] }));
    expect(user.roles).toEqual(['admin']);
  });

  it('refuses a caller whose org does not exist', async () => {
    const orphan = callerOf('client', 'c', '00000000-0000-4000-8000-000000000000', scopesOfRoles(['admin']), ['admin']);
    expect((await failure(service.create(orphan, command({ email: 'orphan@example.com' })))).code).toBe('forbidden');
  });

  it('answers email_taken for an e-mail registered in any case, in any org', async () => {
    await service.create(acme.admin, command({ email: 'dup@example.com' }));
    const error = await failure(service.create(globex.admin, command({ email: '  DUP@Example.com' })));
    expect(error.code).toBe('email_taken');
    expect(error.status).toBe(409);
  });

  it('answers phone_taken for a mobile number another user holds, however it is written', async () => {
    await service.create(acme.admin, command({ email: 'phone-1@example.com', phone: '+86 138-0013-8555' }));
    const error = await failure(
      service.create(globex.admin, command({ email: 'phone-2@example.com', phone: '+8613800138555' })),
    );
    expect(error.code).toBe('phone_taken');
    expect(error.status).toBe(409);
    expect(await prisma.user.count({ where: { email: 'phone-2@example.com' } })).toBe(0);
  });

  it('has the database itself refuse a second user with the same e-mail in another case', async () => {
    const base = { displayName: 'x', roles: ['member'], createdAt: new Date(), updatedAt: new Date() };
    await prisma.user.create({
      data: {
        ...base,
        id: crypto.randomUUID(),
        orgId: acme.orgId,
        email: 'db@example.com',
        emailNormalized: 'db@example.com',
      },
    });
    await expect(
      prisma.user.create({
        data: {
          ...base,
          id: crypto.randomUUID(),
          orgId: globex.orgId,
          email: 'DB@example.com',
          emailNormalized: 'db@example.com',
        },
      }),
    ).rejects.toMatchObject({ code: 'P2002' });
  });

  it('creates exactly one user out of 20 concurrent requests for one e-mail; the 19 others get email_taken', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, index) =>
        service.create(
          acme.admin,
          command({ email: index % 2 ? 'race@example.com' : 'RACE@example.com', displayName: `r${index}` }),
        ),
      ),
    );
    const created = results.filter((result) => result.status === 'fulfilled');
    const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as DomainError] : []));
    expect(created).toHaveLength(1);
    expect(refused.map((error) => error.code)).toEqual(Array(19).fill('email_taken'));
    expect(await prisma.user.count({ where: { emailNormalized: 'race@example.com' } })).toBe(1);
  });
});
