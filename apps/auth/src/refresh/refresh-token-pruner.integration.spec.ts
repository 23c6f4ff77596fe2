import { decodeJwt } from 'jose';

import { VerifiedUser } from '../identity/identity.client';
import { PrismaService } from '../prisma/prisma.service';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { passwordLogin } from '../test-support/login-requests';
import { TokenSet } from '../tokens/grants/grant';
import { PruneCursor, RefreshTokenRepository } from './refresh-token.repository';
import { KEEP_EXPIRED_MS, RefreshTokenPruner } from './refresh-token-pruner';

jest.setTimeout(60_000);

const DAY_MS = 24 * 60 * 60 * 1000;
const ORG = '6d1f3b2a-4c5e-4f6a-8b7c-9d0e1f2a3b4c';
const ADA: VerifiedUser = {
  id: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e',
  orgId: ORG,
  email: 'ada@example.test',
  status: 'active',
  roles: ['member'],
};
const BOB: VerifiedUser = { ...ADA, id: '4d5e6f7a-8b9c-4d0e-8f1a-2b3c4d5e6f7a', email: 'bob@example.test' };

describe('refresh token retention (real Postgres, injected clock)', () => {
  const auth = useAuthOnTestDatabase({
    identityClient: {
      verifyPassword: (email, password) =>
        Promise.resolve(password === 'right-password' ? [ADA, BOB].find((user) => user.email === email) : undefined),
    },
  });
  const login = (who: VerifiedUser) => auth.tokens.issue(passwordLogin({ username: who.email }));
  const refresh = (set: TokenSet) =>
    auth.tokens.issue(passwordLogin({ grantType: 'refresh_token', refreshToken: set.refreshToken }));
  const sidOf = (set: TokenSet) => (decodeJwt(set.accessToken) as { sid: string }).sid;
  const rowsOf = (familyId: string) =>
    auth.harness
      .get(PrismaService)
      .refreshToken.findMany({ where: { familyId }, select: { parentId: true, expiresAt: true } });

  it('deletes expired refresh tokens, keeping what a live session still shows', async () => {
    const ada = await login(ADA); // a session refreshed now and then, for longer than a token lives
    const bob = await login(BOB); // a session never used again
    const adaOnce = await refresh(ada);
    auth.harness.clock.advance(20 * DAY_MS);
    const adaLater = await refresh(adaOnce);
    expect(await rowsOf(sidOf(ada))).toHaveLength(3);
    expect(await rowsOf(sidOf(bob))).toHaveLength(1);

    // 32 days on: Bob's session and Ada's first two tokens have expired; Ada's session lives on.
    auth.harness.clock.advance(12 * DAY_MS);
    expect(await auth.harness.get(RefreshTokenPruner).prune()).toBeGreaterThanOrEqual(2);
    expect(await rowsOf(sidOf(bob))).toEqual([]);
    const adaRows = await rowsOf(sidOf(ada));
    // Her live token, and her session's first one (where it began, as the session list shows it).
    expect(adaRows).toHaveLength(2);
    expect(adaRows.filter((row) => row.parentId === null)).toHaveLength(1);
    expect(adaRows.filter((row) => row.expiresAt.getTime() > auth.harness.clock.now())).toHaveLength(1);
    expect(sidOf(await refresh(adaLater))).toBe(sidOf(ada));
  });

  it('goes on past the tokens it keeps, batch after batch, each token looked at once', async () => {
    const live = [await login(ADA), await login(ADA)];
    const dead = [await login(BOB), await login(BOB), await login(BOB)];
    const refreshed = await Promise.all(live.map(refresh));
    auth.harness.clock.advance(20 * DAY_MS);
    await Promise.all(refreshed.map(refresh)); // the live sessions' tokens expire 20 days later
    auth.harness.clock.advance(12 * DAY_MS);
    const repository = auth.harness.get(RefreshTokenRepository);
    const expiredAt = new Date(auth.harness.clock.now() - KEEP_EXPIRED_MS);
    // Batches of one, in expiry order: of the expired tokens (the earlier test's session among them),
    // the live sessions' first two are kept.
    const expired = await auth.harness
      .get(PrismaService)
      .refreshToken.count({ where: { expiresAt: { lte: expiredAt } } });
    let after: PruneCursor | undefined;
    let [deleted, batches] = [0, 0];
    do {
      const batch = await repository.pruneExpired(expiredAt, after, 1);
      [deleted, batches, after] = [deleted + batch.deleted, batches + 1, batch.next];
    } while (after && batches < 100);
    expect(deleted).toBe(expired - 2);
    expect(batches).toBe(expired + 1); // each token once, and one batch that found none
    for (const set of dead) expect(await rowsOf(sidOf(set))).toEqual([]);
    for (const set of live) expect(await rowsOf(sidOf(set))).toHaveLength(2);
  });
});
