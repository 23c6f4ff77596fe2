import { METRICS_REGISTRY } from '@acct/observability';
import { Registry } from 'prom-client';

import { VerifiedUser } from '../identity/identity.client';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { outcomeOf, passwordLogin } from '../test-support/login-requests';
import { refusal } from '../test-support/refusal';
import { TokenRequest } from '../tokens/grants/grant';
import { KnownSourcePruner } from './known-source-pruner';
import { ACCOUNT_MAX_FAILURES } from './login-throttle';

const USER: VerifiedUser = {
  id: '1a0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  orgId: '3f0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f',
  email: 'ada@example.test',
  status: 'active',
  roles: ['member'],
};

/** Identity as the password grant sees it: accounts sharing one password, checked with some latency. */
class CountingIdentity {
  checks = 0;
  /** When set, the next check waits for it (and calls `arrived` first). */
  held?: { arrived: () => void; release: Promise<void> };
  async verifyPassword(email: string, password: string): Promise<VerifiedUser | undefined> {
    this.checks += 1;
    const held = this.held;
    this.held = undefined;
    if (held) {
      held.arrived();
      await held.release;
    }
    const valid = email.endsWith('@example.test') && !email.startsWith('nobody') && password === 'right-password';
    return new Promise((resolve) => setTimeout(() => resolve(valid ? { ...USER, email } : undefined), 5));
  }
}

const attempt = (fields: Partial<TokenRequest>): TokenRequest =>
  passwordLogin({ username: USER.email, password: 'wrong', clientIp: '198.51.100.1', ...fields });

/** The n-th of many attacker IPs (10.x.y.z). */
const DAY_MS = 24 * 60 * 60 * 1000;

const ipNumber = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

describe('account-wide login ceiling (real Postgres, injected clock)', () => {
  const identity = new CountingIdentity();
  const auth = useAuthOnTestDatabase({ identityClient: identity });
  let nextIp = 1;

  /** `count` failures on `username`, five per IP (under the pair lock), each from a fresh IP range. */
  async function failFromManyIps(username: string, count: number): Promise<string[]> {
    const outcomes: string[] = [];
    for (let index = 0; index < count; index += 1) {
      if (index % 5 === 0) nextIp += 1;
      outcomes.push(await outcomeOf(auth.tokens.issue(attempt({ username, clientIp: ipNumber(nextIp) }))));
    }
    nextIp += 1;
    return outcomes;
  }
  const freshIp = () => ipNumber((nextIp += 1));

  const lockouts = async (scope: string) => {
    const registry = auth.harness.module.get<Registry>(METRICS_REGISTRY, { strict: false });
    const metric = await registry.getSingleMetric('auth_lockouts_total')?.get();
    return metric?.values.find((value) => value.labels.scope === scope)?.value ?? 0;
  };

  it('locks out new sources after 100 failures from many IPs, not known IPs or devices, for the hour', async () => {
    const username = 'ada@example.test';
    // The owner logged in before, from home and with a phone elsewhere (which kept its device credential).
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: '192.0.2.1' }))),
    ).toBe('ok');
    const phone = await auth.tokens.issue(
      attempt({ username, password: 'right-password', clientIp: '192.0.2.2', deviceId: 'phone-1' }),
    );
    expect(phone.deviceToken).not.toBe('');

    const started = await lockouts('account');
    const outcomes = await failFromManyIps(username, ACCOUNT_MAX_FAILURES);
    expect(outcomes.every((code) => code === 'invalid_grant')).toBe(true);
    const checks = identity.checks;

    const locked = await refusal(
      auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() })),
    );
    expect(locked.code).toBe('login_locked');
    expect(locked.status).toBe(429);
    expect(locked.options.retryAfter).toBe(60 * 60);
    expect(locked.options.extensions).toMatchObject({ error: 'login_locked' });
    expect(identity.checks).toBe(checks); // refused without a password check
    expect(await lockouts('account')).toBe(started + 1);
    expect(await outcomeOf(auth.tokens.issue(attempt({ username, clientIp: freshIp() })))).toBe('login_locked');
    expect(await lockouts('account')).toBe(started + 1); // counted once, when the lock starts

    // The owner's known IP, and the known device (its credential) from an IP never seen, still get in;
    // the device id it used to send alone is no longer worth anything.
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: '192.0.2.1' }))),
    ).toBe('ok');
    expect(
      await outcomeOf(
        auth.tokens.issue(
          attempt({ username, password: 'right-password', clientIp: freshIp(), deviceToken: phone.deviceToken }),
        ),
      ),
    ).toBe('ok');
    expect(
      await outcomeOf(
        auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp(), deviceId: 'phone-1' })),
      ),
    ).toBe('login_locked');

    const audit = await auth.database.query<{ reason: string; count: string }>(
      "SELECT reason, count(*) FROM login_audit WHERE username = $1 AND outcome = 'failure' GROUP BY reason ORDER BY reason",
      [username],
    );
    expect(audit).toEqual([
      { reason: 'invalid_grant', count: String(ACCOUNT_MAX_FAILURES) },
      { reason: 'login_locked_account', count: '3' },
    ]);

    auth.harness.clock.advance(59 * 60 * 1000);
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() }))),
    ).toBe('login_locked');
    auth.harness.clock.advance(60 * 1000);
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() }))),
    ).toBe('ok');
  });

  it('exempts only a genuine, unexpired device credential issued to this username', async () => {
    const username = 'mary@example.test';
    const other = await auth.tokens.issue(attempt({ username: 'joan@example.test', password: 'right-password' }));
    const own = await auth.tokens.issue(
      attempt({ username, password: 'right-password', clientIp: freshIp(), deviceId: 'laptop-1' }),
    );
    await failFromManyIps(username, ACCOUNT_MAX_FAILURES);
    const [header, body, signature] = own.deviceToken.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forgedBody = Buffer.from(JSON.stringify({ ...claims, exp: Number(claims.exp) + 10 ** 8 })).toString(
      'base64url',
    );
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    const presenting = (deviceToken: string, deviceId = '') =>
      outcomeOf(
        auth.tokens.issue(
          attempt({ username, password: 'right-password', clientIp: freshIp(), deviceToken, deviceId }),
        ),
      );
    for (const invented of [
      'phone-1',
      'a.b.c',
      other.deviceToken, // another user's
      `${header}.${body}.${flipped}`, // tampered signature
      `${header}.${forgedBody}.${signature}`, // tampered claims
      `${Buffer.from('{"alg":"none","typ":"device+jwt"}').toString('base64url')}.${body}.`,
      own.deviceToken + 'x'.repeat(1024),
    ]) {
      expect(await presenting(invented)).toBe('login_locked');
    }
    expect(await presenting('', 'laptop-1')).toBe('login_locked');
    expect(await presenting(own.deviceToken)).toBe('ok');
    // Each login returns a new credential for the device; the old one lives on until it expires.
    auth.harness.clock.advance(90 * 24 * 60 * 60 * 1000 + 1000);
    await failFromManyIps(username, ACCOUNT_MAX_FAILURES);
    expect(await presenting(own.deviceToken)).toBe('login_locked');
  });

  it('exempts a known IP for 90 days after its last success, each success starting them again, then deletes it', async () => {
    const username = 'hedy@example.test';
    const home = freshIp();
    const fromHome = () =>
      outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: home })));
    const sourcesOf = (name: string) =>
      auth.database.query<{ kind: string; value: string }>(
        'SELECT kind, value FROM known_login_sources WHERE username = $1 ORDER BY kind, value',
        [name],
      );
    expect(await fromHome()).toBe('ok');
    auth.harness.clock.advance(89 * DAY_MS);
    expect(await fromHome()).toBe('ok'); // the 90 days start again
    auth.harness.clock.advance(89 * DAY_MS);
    await failFromManyIps(username, ACCOUNT_MAX_FAILURES);
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() }))),
    ).toBe('login_locked');
    expect(await fromHome()).toBe('ok'); // 89 days since its last success: still the owner's
    expect(await sourcesOf(username)).toEqual([{ kind: 'ip', value: home }]);

    // 90 days without a success from it: no longer exempt (a new budget, spent again), and deleted.
    auth.harness.clock.advance(90 * DAY_MS + 1000);
    const fresh = 'rosalind@example.test';
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username: fresh, password: 'right-password', clientIp: home }))),
    ).toBe('ok');
    await failFromManyIps(username, ACCOUNT_MAX_FAILURES);
    expect(await fromHome()).toBe('login_locked');
    expect(await auth.harness.get(KnownSourcePruner).prune()).toBeGreaterThanOrEqual(1);
    expect(await sourcesOf(username)).toEqual([]);
    expect(await sourcesOf(fresh)).toEqual([{ kind: 'ip', value: home }]); // seen within the 90 days: kept
  });

  it('deletes an account’s rows of kind device and its expired IPs at its next successful login', async () => {
    const username = 'barbara@example.test';
    const [old, current] = [freshIp(), freshIp()];
    const now = auth.harness.clock.now();
    await auth.database.query(
      `INSERT INTO known_login_sources (username, kind, value, first_seen_at, last_seen_at) VALUES
         ($1, 'device', 'phone-1', $2, $2), ($1, 'ip', $3, $4, $4), ($5, 'device', 'phone-2', $2, $2)`,
      [username, new Date(now - DAY_MS), old, new Date(now - 91 * DAY_MS), 'someone@example.test'],
    );
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: current }))),
    ).toBe('ok');
    expect(
      await auth.database.query('SELECT kind, value FROM known_login_sources WHERE username = $1', [username]),
    ).toEqual([{ kind: 'ip', value: current }]);
    // Another account's row waits for its own login, or for the expiry.
    expect(
      await auth.database.query('SELECT kind FROM known_login_sources WHERE username = $1', ['someone@example.test']),
    ).toEqual([{ kind: 'device' }]);
  });

  it('counts unknown usernames the same way', async () => {
    const username = 'nobody@example.test';
    expect((await failFromManyIps(username, ACCOUNT_MAX_FAILURES)).every((code) => code === 'invalid_grant')).toBe(
      true,
    );
    expect(await outcomeOf(auth.tokens.issue(attempt({ username, clientIp: freshIp() })))).toBe('login_locked');
  });

  it('counts only failures: successes from new sources neither use up nor reset the budget', async () => {
    const username = 'grace@example.test';
    // Many logins from new places (a roaming owner, or a client behind rotating addresses) lock nothing.
    for (let index = 0; index < ACCOUNT_MAX_FAILURES + 20; index += 1) {
      expect(
        await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() }))),
      ).toBe('ok');
    }
    await failFromManyIps(username, ACCOUNT_MAX_FAILURES - 1);
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() }))),
    ).toBe('ok');
    // The success gave its slot back without resetting the 99 failures: one more failure spends it.
    expect(await outcomeOf(auth.tokens.issue(attempt({ username, clientIp: freshIp() })))).toBe('invalid_grant');
    expect(
      await outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() }))),
    ).toBe('login_locked');
  });

  it('gives a success’s slot back only to the window it was taken in, never to the next one', async () => {
    const username = 'alan@example.test';
    // The owner logs in from a new place as the hour ends; the password check takes a moment.
    let release = () => {};
    const arrived = new Promise<void>((resolve) => {
      identity.held = { arrived: resolve, release: new Promise<void>((done) => (release = done)) };
    });
    const owner = outcomeOf(auth.tokens.issue(attempt({ username, password: 'right-password', clientIp: freshIp() })));
    await arrived;
    // Meanwhile the hour is over, and an attacker's first failure starts the next window.
    auth.harness.clock.advance(60 * 60 * 1000);
    expect(await failFromManyIps(username, 1)).toEqual(['invalid_grant']);
    release();
    expect(await owner).toBe('ok');
    // The owner's slot was of the last window: the new one still has 99 failures left, not 100.
    const outcomes = await failFromManyIps(username, ACCOUNT_MAX_FAILURES);
    expect(outcomes.filter((code) => code === 'invalid_grant')).toHaveLength(ACCOUNT_MAX_FAILURES - 1);
    expect(outcomes[ACCOUNT_MAX_FAILURES - 1]).toBe('login_locked');
  });

  it('never counts more than 100 attempts, however many arrive at once', async () => {
    const username = 'linus@example.test';
    await failFromManyIps(username, ACCOUNT_MAX_FAILURES - 5);
    const before = identity.checks;
    // The last five slots, raced for by 25 attempts from 25 IPs.
    const outcomes = await Promise.all(
      Array.from({ length: 25 }, (_, index) =>
        outcomeOf(auth.tokens.issue(attempt({ username, clientIp: ipNumber(50_000 + index) }))),
      ),
    );
    expect(outcomes.filter((code) => code === 'invalid_grant')).toHaveLength(5);
    expect(outcomes.filter((code) => code === 'login_locked')).toHaveLength(20);
    expect(identity.checks - before).toBe(5);
    const [budget] = await auth.database.query<{ failures: number }>(
      'SELECT failures FROM login_account_throttles WHERE username = $1',
      [username],
    );
    expect(budget?.failures).toBe(ACCOUNT_MAX_FAILURES);
  });

  it('answers right and wrong logins of one account arriving at once, from one IP and many', async () => {
    // Successes free the pair and give the budget's slot back in one statement while other attempts take
    // both slots in one; every attempt is answered, and only failures keep a slot of the budget.
    const username = 'edsger@example.test';
    const sharedIp = freshIp();
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        outcomeOf(
          auth.tokens.issue(
            attempt({
              username,
              password: index % 2 === 0 ? 'right-password' : 'wrong',
              clientIp: index % 4 < 2 ? sharedIp : freshIp(),
            }),
          ),
        ),
      ),
    );
    expect(outcomes.filter((code) => code === 'ok').length).toBeGreaterThan(0);
    expect(outcomes.every((code) => ['ok', 'invalid_grant', 'login_locked'].includes(code))).toBe(true);
    const [budget] = await auth.database.query<{ failures: number; refused: number }>(
      'SELECT failures, refused FROM login_account_throttles WHERE username = $1',
      [username],
    );
    // Only the failures from sources that were not yet known keep their slots.
    expect(budget?.refused).toBe(0);
    expect(budget?.failures).toBeLessThanOrEqual(outcomes.filter((code) => code === 'invalid_grant').length);
  });

  it('counts a pair lock as it starts', async () => {
    const before = await lockouts('pair');
    const ip = freshIp();
    for (let index = 0; index < 8; index += 1)
      await outcomeOf(auth.tokens.issue(attempt({ username: 'ken@example.test', clientIp: ip })));
    expect(await lockouts('pair')).toBe(before + 1);
  });
});
