import { PASSWORD_RESET_ISSUED } from '@acct/events';

import { PrismaService } from '../prisma/prisma.service';
import { domainFailure, IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserService } from '../users/create-user.service';
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

  it('takes a link asked for after the password was set', async () => {
    const user = await newUser();
    await passwords.setPassword(await resetLink(user.id), 'first-password-1');
    const later = await resetLink(user.id);
    await expect(passwords.setPassword(later, 'second-password-1')).resolves.toMatchObject({ id: user.id });
  });
});
