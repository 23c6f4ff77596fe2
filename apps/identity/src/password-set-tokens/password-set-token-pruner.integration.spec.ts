import { PASSWORD_SET_TOKEN_LIFETIME_MS } from '@acct/events';

import { PasswordSetService } from '../activation/password-set.service';
import { PrismaService } from '../prisma/prisma.service';
import { IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserService } from '../users/create-user.service';
import { PasswordSetTokenPruner } from './password-set-token-pruner';

jest.setTimeout(60_000);

/** Activation and reset links are one row each: what expired goes, every link still valid stays. */
describe('password-set token retention (real Postgres, injected clock)', () => {
  let identity: IdentityHarness;
  let acme: SeededOrg;
  let sequence = 0;

  const newUser = async () => {
    sequence += 1;
    const { user } = await identity.get(CreateUserService).create(acme.admin, {
      email: `retained${sequence}@acme.example.com`,
      displayName: `Retained ${sequence}`,
      roles: [],
      sendActivation: false,
      requestFingerprint: '',
    });
    return user;
  };
  const resetLink = async (userId: string) =>
    (await identity.get(PasswordSetService).requestReset(acme.admin, userId, false)).token;
  const tokensOf = (userId: string) => identity.get(PrismaService).passwordSetToken.count({ where: { userId } });
  const valid = (token: string) =>
    identity
      .get(PasswordSetService)
      .checkToken(token)
      .then(() => true)
      .catch(() => false);

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    acme = await identity.seedOrg('acme');
  });

  afterAll(async () => {
    await identity?.close();
  });

  it('deletes a link once it has expired, never one still valid (to its last millisecond)', async () => {
    const early = await newUser();
    const late = await newUser();
    const started = identity.clock.now();
    const earlyLink = await resetLink(early.id);
    identity.clock.advance(PASSWORD_SET_TOKEN_LIFETIME_MS / 2);
    const lateLink = await resetLink(late.id);
    try {
      // The early link's last valid millisecond: the prune keeps both.
      identity.clock.advance(PASSWORD_SET_TOKEN_LIFETIME_MS / 2 - 1);
      await identity.get(PasswordSetTokenPruner).prune();
      expect(await valid(earlyLink)).toBe(true);
      expect(await tokensOf(early.id)).toBe(1);

      // Expired (a link is refused from its expiry on): its row goes, the late one's stays and works.
      identity.clock.advance(1);
      expect(await valid(earlyLink)).toBe(false);
      expect(await identity.get(PasswordSetTokenPruner).prune()).toBeGreaterThanOrEqual(1);
      expect(await tokensOf(early.id)).toBe(0);
      expect(await tokensOf(late.id)).toBe(1);
      expect(await valid(lateLink)).toBe(true);
    } finally {
      identity.clock.advance(started - identity.clock.now());
    }
  });

  it('deletes a backlog in batches of at most 1,000 rows', async () => {
    const user = await newUser();
    const expired = identity.clock.date();
    await identity.get(PrismaService).passwordSetToken.createMany({
      data: Array.from({ length: 2500 }, (_, index) => ({
        id: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
        userId: user.id,
        tokenHash: `backlog-${index}`,
        expiresAt: expired,
      })),
    });
    expect(await identity.get(PasswordSetTokenPruner).prune()).toBe(2500);
    expect(await tokensOf(user.id)).toBe(0);
  });
});
