import { waitFor } from '@acct/testing';
import pg from 'pg';

import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { PAIR_RULES } from './lockout.policy';
import { ACCOUNT_MAX_FAILURES, ACCOUNT_WINDOW_SECONDS, KNOWN_SOURCE_TTL_MS } from './login-throttle';
import { LoginThrottleRepository } from './login-throttle.repository';

const RULES = {
  pair: PAIR_RULES,
  account: { maxFailures: ACCOUNT_MAX_FAILURES, windowSeconds: ACCOUNT_WINDOW_SECONDS },
};
const IP = '203.0.113.9';

/*
 * Two logins of one account may run the two statements at once (one taking slots, one recording a
 * success); each locks the (username, IP) pair's row and the account's budget row, so both must take
 * them in the same order, the pair's first, or they could wait for each other until Postgres aborts
 * one as a deadlock. Each test holds the budget's row in a transaction of its own, starts a statement,
 * waits until it is stuck on that lock, and asks whether it already holds the pair's.
 */
describe('login throttle statements (real Postgres): the pair is locked before the budget', () => {
  const auth = useAuthOnTestDatabase({ identityClient: { verifyPassword: () => Promise.resolve(undefined) } });
  const repository = () => auth.harness.get(LoginThrottleRepository);
  const admit = (username: string, at = new Date()) =>
    repository().admit(username, IP, at, { deviceExempt: false, knownSince: new Date(0) }, RULES);

  /** Runs `statement` while the budget of `username` is locked elsewhere: whether it locked the pair first. */
  async function pairLockedBeforeBudget(username: string, statement: () => Promise<unknown>): Promise<boolean> {
    const holder = new pg.Client({ connectionString: auth.database.url });
    const checker = new pg.Client({ connectionString: auth.database.url });
    await Promise.all([holder.connect(), checker.connect()]);
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM login_account_throttles WHERE username = $1 FOR UPDATE', [username]);
      const running = statement();
      await waitFor('the statement to wait for the budget', async () => {
        const { rows } = await checker.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows[0].waiting > 0 ? true : undefined;
      });
      const pairLocked = await checker
        .query('SELECT 1 FROM login_throttles WHERE username = $1 AND client_ip = $2 FOR UPDATE NOWAIT', [username, IP])
        .then(
          () => false,
          (error: { code?: string }) => error.code === '55P03',
        );
      await holder.query('COMMIT');
      await running;
      return pairLocked;
    } finally {
      await Promise.all([holder.end(), checker.end()]);
    }
  }

  it('when it takes the slots before a password check', async () => {
    const username = 'grace@example.test';
    await admit(username);
    expect(await pairLockedBeforeBudget(username, () => admit(username))).toBe(true);
  });

  it('when it records a success that gives the budget its slot back', async () => {
    const username = 'barbara@example.test';
    const { budget: slot } = await admit(username);
    const now = Date.now();
    const success = () =>
      repository().recordSuccess(
        username,
        IP,
        new Date(now),
        new Date(now - KNOWN_SOURCE_TTL_MS),
        slot?.windowStartedAt,
      );
    expect(await pairLockedBeforeBudget(username, success)).toBe(true);
    const [budget] = await auth.database.query<{ failures: number }>(
      'SELECT failures FROM login_account_throttles WHERE username = $1',
      [username],
    );
    // The slot the first attempt took was given back once the budget's row was free again.
    expect(budget?.failures).toBe(0);
  });

  it('when it gives back the slots of an attempt whose password was never checked', async () => {
    const username = 'margaret@example.test';
    await admit(username);
    const at = new Date();
    const { budget } = await admit(username, at);
    const slots = { pair: at, budget: budget?.windowStartedAt };
    expect(await pairLockedBeforeBudget(username, () => repository().giveBack(username, IP, slots, PAIR_RULES))).toBe(
      true,
    );
    const [counts] = await auth.database.query<{ attempts: number; failures: number }>(
      `SELECT pair.attempts, budget.failures FROM login_throttles pair
       JOIN login_account_throttles budget USING (username) WHERE username = $1 AND client_ip = $2`,
      [username, IP],
    );
    // The second attempt counts for nothing; the first is still a failure of the pair and the budget.
    expect(counts).toEqual({ attempts: 1, failures: 1 });
  });
});
