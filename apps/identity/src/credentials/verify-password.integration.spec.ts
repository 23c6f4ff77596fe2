import { performance } from 'node:perf_hooks';

import { INTERNAL_IDENTITY_SCOPE } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { waitFor } from '@acct/testing';

import { PasswordSetService } from '../activation/password-set.service';
import { OutboxRepository } from '../outbox/outbox.repository';
import { PrismaService } from '../prisma/prisma.service';
import { callerOf, IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserService } from '../users/create-user.service';
import { UserStatusService } from '../users/user-status.service';
import { VerifyPasswordService } from './verify-password.service';

jest.setTimeout(60_000);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

describe('VerifyPassword against Postgres', () => {
  let identity: IdentityHarness;
  let service: VerifyPasswordService;
  let acme: SeededOrg;
  const auth = callerOf('client', 'auth-service', 'system', [INTERNAL_IDENTITY_SCOPE]);

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    service = identity.get(VerifyPasswordService);
    acme = await identity.seedOrg('acme', 'the admin password');
    const users = identity.get(CreateUserService);
    await users.create(acme.admin, {
      email: 'Pending@Example.com',
      displayName: 'Pending',
      password: 'pending password',
      roles: [],
      requestFingerprint: '',
      phone: '+86 138 0013 8000',
    });
    await users.create(acme.admin, {
      email: 'nopassword@example.com',
      displayName: 'No password',
      roles: [],
      requestFingerprint: '',
    });
  });

  afterAll(async () => {
    await identity?.close();
  });

  it('accepts the right password, looking the e-mail up case-insensitively, and answers the user', async () => {
    const answer = await service.verify(auth, '  ADMIN@acme.example.com ', 'the admin password');
    expect(answer).toEqual({
      valid: true,
      user: expect.objectContaining({ id: acme.adminUserId, orgId: acme.orgId, status: 'active', roles: ['admin'] }),
    });
  });

  it('answers a pending user too: whether it may log in is the auth service’s decision', async () => {
    const answer = await service.verify(auth, 'pending@example.com', 'pending password');
    expect(answer.valid).toBe(true);
    expect(answer.user?.status).toBe('pending');
  });

  it('answers the same {valid:false} for a wrong password, an unknown e-mail and a user without a password', async () => {
    const answers = await Promise.all([
      service.verify(auth, 'admin@acme.example.com', 'wrong password'),
      service.verify(auth, 'nobody@acme.example.com', 'the admin password'),
      service.verify(auth, 'nopassword@example.com', ''),
    ]);
    for (const answer of answers) expect(answer).toEqual({ valid: false, user: undefined });
  });

  it('takes about as long for an unknown e-mail as for a wrong password (the dummy hash is verified)', async () => {
    const unknown: number[] = [];
    const wrong: number[] = [];
    const time = async (into: number[], email: string) => {
      const started = performance.now();
      await service.verify(auth, email, 'not the password');
      into.push(performance.now() - started);
    };
    for (let round = 0; round < 7; round += 1) {
      await time(unknown, `nobody-${round}@example.com`);
      await time(wrong, 'admin@acme.example.com');
    }
    const ratio = median(unknown) / median(wrong);
    expect(ratio).toBeGreaterThan(0.4);
    expect(ratio).toBeLessThan(2.5);
  });

  it('refuses a caller without internal:identity with insufficient_scope', async () => {
    const user = callerOf('user', acme.adminUserId, acme.orgId, ['users:read', 'users:write'], ['admin']);
    await expect(service.verify(user, 'admin@acme.example.com', 'the admin password')).rejects.toMatchObject({
      code: 'insufficient_scope',
    });
    await expect(service.verify(user, 'admin@acme.example.com', 'x')).rejects.toBeInstanceOf(DomainError);
  });

  it.each(['+8613800138000', '+86 138-0013-8000', '0086 138 0013 8000', '+86 (138) 0013 8000'])(
    'accepts the mobile number %p as the username and answers the same user as its e-mail',
    async (username) => {
      const byPhone = await service.verify(auth, username, 'pending password');
      const byEmail = await service.verify(auth, 'pending@example.com', 'pending password');
      expect(byPhone).toEqual(byEmail);
      expect(byPhone.user?.phone).toBe('+8613800138000');
    },
  );

  it('answers {valid:false} for a phone with the wrong password, a national number and an unknown phone', async () => {
    const answers = await Promise.all([
      service.verify(auth, '+8613800138000', 'wrong password'),
      service.verify(auth, '13800138000', 'pending password'),
      service.verify(auth, '+8613800138999', 'pending password'),
    ]);
    for (const answer of answers) expect(answer).toEqual({ valid: false, user: undefined });
  });

  it('answers a disabled user after a correct password only, with its status: auth refuses it', async () => {
    const { user } = await identity.get(CreateUserService).create(acme.admin, {
      email: 'disabled@example.com',
      displayName: 'Disabled',
      password: 'disabled password',
      roles: [],
      requestFingerprint: '',
    });
    await identity.get(UserStatusService).disable(acme.admin, user.id, []);
    expect((await service.verify(auth, 'disabled@example.com', 'disabled password')).user?.status).toBe('disabled');
    expect(await service.verify(auth, 'disabled@example.com', 'wrong password')).toEqual({
      valid: false,
      user: undefined,
    });
  });

  it('resolves the e-mail and the phone of one user to one login key with its org, and unknown usernames to their normalised form', async () => {
    const pending = await service.verify(auth, 'pending@example.com', 'pending password');
    const known = { key: `user:${pending.user?.id}`, userId: pending.user?.id, orgId: acme.orgId };
    expect(await service.loginKey(auth, ' PENDING@example.com')).toEqual(known);
    expect(await service.loginKey(auth, '+86 138-0013-8000')).toEqual(known);
    expect(await service.loginKey(auth, '008613800138000')).toEqual(known);
    expect(await service.loginKey(auth, 'Nobody@Example.com')).toEqual({ key: 'email:nobody@example.com' });
    expect(await service.loginKey(auth, '+86 138 0013 8999')).toEqual({ key: 'phone:+8613800138999' });
    expect(await service.loginKey(auth, '138 0013 8999')).toEqual({ key: 'email:138 0013 8999' });
    const user = callerOf('user', acme.adminUserId, acme.orgId, ['users:read'], ['admin']);
    await expect(service.loginKey(user, 'pending@example.com')).rejects.toMatchObject({ code: 'insufficient_scope' });
  });

  // An operator who raises ARGON2_* (or a hash from the library used before) expects every password
  // to reach the new cost as its user logs in: a hash left at the old cost stays cheaper to crack, and
  // its wrong passwords answer faster than an unknown e-mail's (the dummy hash has the new cost).
  it('rehashes a password stored with other argon2 parameters at its next correct check, and only then', async () => {
    const prisma = identity.get(PrismaService);
    const { user } = await identity.get(CreateUserService).create(acme.admin, {
      email: 'old-hash@example.com',
      displayName: 'Old hash',
      password: 'placeholder password',
      roles: [],
      requestFingerprint: '',
    });
    // 'ünïcødé pässwörd 🔑' at m=8192, t=3, p=2 (@node-rs/argon2 2.2; password-hasher.spec.ts).
    const oldHash = '$argon2id$v=19$m=8192,t=3,p=2$QNzR7LZ9Cj3F0JfxQ/7yJA$QETmcSmQoo/IdejoepghgOpuI602zFnNtSnlPEGBAIk';
    await prisma.user.update({ where: { id: user.id }, data: { passwordHash: oldHash } });
    const storedHash = async () =>
      (await prisma.user.findUniqueOrThrow({ where: { id: user.id }, select: { passwordHash: true } })).passwordHash;

    expect(await service.verify(auth, 'old-hash@example.com', 'wrong password')).toEqual({
      valid: false,
      user: undefined,
    });
    expect(await storedHash()).toBe(oldHash);

    expect((await service.verify(auth, 'old-hash@example.com', 'ünïcødé pässwörd 🔑')).valid).toBe(true);
    const upgraded = await waitFor(
      'the rehashed password',
      async () => {
        const stored = await storedHash();
        return stored === oldHash ? undefined : stored;
      },
      { timeoutMs: 10_000 },
    );
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect((await service.verify(auth, 'old-hash@example.com', 'ünïcødé pässwörd 🔑')).valid).toBe(true);
    expect(await storedHash()).toBe(upgraded);
  });

  // Auth ends the sessions begun before the change's time (read under the user's lock, before the
  // commit): a check that read the user between that time and the commit would let a login with the
  // old password, or of a user being disabled, keep a session begun after it.
  it('waits for a password change or a disable being committed, and answers the user as it is then', async () => {
    const outbox = identity.get(OutboxRepository);
    const passwords = identity.get(PasswordSetService);
    /** Runs `change` held open at its first outbox write (after its time was read) while `check` runs. */
    const duringChange = async <T>(change: () => Promise<unknown>, check: () => Promise<T>): Promise<T> => {
      const append = outbox.append.bind(outbox);
      let reached!: () => void;
      const atWrite = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const spy = jest.spyOn(outbox, 'append').mockImplementationOnce(async (...args) => {
        reached();
        await released;
        return append(...args);
      });
      try {
        const changed = change();
        await atWrite;
        const checked = check();
        await Promise.race([checked, new Promise((resolve) => setTimeout(resolve, 500))]);
        release();
        await changed;
        return await checked;
      } finally {
        spy.mockRestore();
      }
    };
    const { user } = await identity.get(CreateUserService).create(acme.admin, {
      email: 'changing@example.com',
      displayName: 'Changing',
      password: 'the old password',
      roles: [],
      requestFingerprint: '',
    });
    const { token } = await passwords.requestReset(acme.admin, user.id, false);

    const afterChange = await duringChange(
      () => passwords.setPassword(token, 'the new password'),
      () => service.verify(auth, 'changing@example.com', 'the old password'),
    );
    expect(afterChange).toEqual({ valid: false, user: undefined });

    const whileDisabling = await duringChange(
      () => identity.get(UserStatusService).disable(acme.admin, user.id, []),
      () => service.verify(auth, 'changing@example.com', 'the new password'),
    );
    expect(whileDisabling.user?.status).toBe('disabled');
  });
});
