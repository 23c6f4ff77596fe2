import { PrismaService } from '../prisma/prisma.service';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { outcomeOf, passwordLogin } from '../test-support/login-requests';
import { MAX_FAILURES } from './lockout.policy';
import { THROTTLE_PRUNE_BATCH, ThrottlePruner } from './throttle-pruner';

const MINUTE_MS = 60 * 1000;

describe('login throttle retention (real Postgres, injected clock)', () => {
  const auth = useAuthOnTestDatabase({ identityClient: { verifyPassword: () => Promise.resolve(undefined) } });
  const fail = (username: string, clientIp: string) =>
    outcomeOf(auth.tokens.issue(passwordLogin({ username, password: 'wrong', clientIp })));
  const rows = async () => {
    const prisma = auth.harness.get(PrismaService);
    return { pairs: await prisma.loginThrottle.count(), budgets: await prisma.loginAccountThrottle.count() };
  };

  it('deletes the throttles of attempts whose window and lock are over, and only those', async () => {
    // A spray: one failure each on many usernames from many IPs.
    for (let n = 1; n <= 50; n += 1) expect(await fail(`user${n}@example.test`, `10.0.0.${n}`)).toBe('invalid_grant');
    auth.harness.clock.advance(10 * MINUTE_MS);
    const held = ['held@example.test', '198.51.100.7'] as const;
    for (let n = 0; n < MAX_FAILURES; n += 1) await fail(...held);
    expect(await fail(...held)).toBe('login_locked');
    expect(await rows()).toEqual({ pairs: 51, budgets: 51 });

    // The spray's windows (15 min) are over; the held pair is locked for 15 min from its last failure,
    // and every account's hour is still running.
    auth.harness.clock.advance(6 * MINUTE_MS);
    expect(await auth.harness.get(ThrottlePruner).prune()).toBe(50);
    expect(await rows()).toEqual({ pairs: 1, budgets: 51 });
    expect(await fail(...held)).toBe('login_locked');

    auth.harness.clock.advance(60 * MINUTE_MS);
    expect(await auth.harness.get(ThrottlePruner).prune()).toBe(52);
    expect(await rows()).toEqual({ pairs: 0, budgets: 0 });
  });

  it('goes on batch after batch until every row past its window is gone', async () => {
    const prisma = auth.harness.get(PrismaService);
    const past = new Date(auth.harness.clock.now() - 2 * 60 * MINUTE_MS);
    const many = Math.floor(2.5 * THROTTLE_PRUNE_BATCH);
    await prisma.$executeRaw`
      INSERT INTO login_throttles (username, client_ip, attempts, window_started_at, locked_until)
      SELECT 'sprayed' || n || '@example.test', '203.0.113.1', 1, ${past}, NULL FROM generate_series(1, ${many}) AS n`;
    await prisma.$executeRaw`
      INSERT INTO login_account_throttles (username, failures, window_started_at, refused)
      SELECT 'sprayed' || n || '@example.test', 1, ${past}, 0 FROM generate_series(1, ${many}) AS n`;
    expect(await auth.harness.get(ThrottlePruner).prune()).toBe(2 * many);
    expect(await rows()).toEqual({ pairs: 0, budgets: 0 });
  });

  it('keeps a pair whose oldest failure is past the window while later ones still count', async () => {
    const pair = ['sliding@example.test', '198.51.100.8'] as const;
    expect(await fail(...pair)).toBe('invalid_grant');
    auth.harness.clock.advance(14 * MINUTE_MS);
    for (let n = 0; n < MAX_FAILURES - 2; n += 1) expect(await fail(...pair)).toBe('invalid_grant');
    // The first failure is out of the window, the three others are not: pruned, they were forgotten.
    auth.harness.clock.advance(2 * MINUTE_MS);
    await auth.harness.get(ThrottlePruner).prune();
    expect(await fail(...pair)).toBe('invalid_grant');
    expect(await fail(...pair)).toBe('invalid_grant');
    expect(await fail(...pair)).toBe('login_locked');
  });
});
