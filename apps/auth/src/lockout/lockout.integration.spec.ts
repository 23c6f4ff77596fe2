import { DomainError } from '@acct/problem';

import { VerifiedUser } from '../identity/identity.client';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { outcomeOf, passwordLogin } from '../test-support/login-requests';
import { TokenRequest } from '../tokens/grants/grant';

const USER: VerifiedUser = {
  id: '6a0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  orgId: '3f0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f',
  email: 'ada@example.test',
  status: 'active',
  roles: ['member'],
};

/** Identity as the password grant sees it: one account, checked with a delay like argon2's. */
class SlowIdentity {
  checks = 0;
  /** Set by a test: the check of the password `identity-hangs` calls `arrived`, waits for `release`, then fails. */
  hang?: { arrived: () => void; release: Promise<void> };
  async verifyPassword(email: string, password: string): Promise<VerifiedUser | undefined> {
    this.checks += 1;
    if (password === 'identity-hangs' && this.hang) {
      this.hang.arrived();
      await this.hang.release;
      throw new Error('identity did not answer');
    }
    if (password === 'identity-down') return Promise.reject(new Error('identity did not answer'));
    const valid = email === USER.email && password === 'right-password';
    return new Promise((resolve) => setTimeout(() => resolve(valid ? USER : undefined), 20));
  }
}

const attempt = (password: string, clientIp = '203.0.113.9', username = USER.email): TokenRequest =>
  passwordLogin({ username, password, clientIp });

describe('login lockout (real Postgres, injected clock)', () => {
  const identity = new SlowIdentity();
  const auth = useAuthOnTestDatabase({ identityClient: identity });

  it('locks a (username, IP) pair after exactly 5 failures, correct password or not, for 15 minutes', async () => {
    const ip = '198.51.100.1';
    for (let index = 0; index < 5; index += 1)
      expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    const locked = await auth.tokens.issue(attempt('right-password', ip)).catch((error: DomainError) => error);
    expect(locked).toBeInstanceOf(DomainError);
    expect((locked as DomainError).code).toBe('login_locked');
    expect((locked as DomainError).status).toBe(429);
    expect((locked as DomainError).options.retryAfter).toBe(15 * 60);
    auth.harness.clock.advance(14 * 60 * 1000);
    expect(await outcomeOf(auth.tokens.issue(attempt('right-password', ip)))).toBe('login_locked');
    auth.harness.clock.advance(61 * 1000);
    expect(await outcomeOf(auth.tokens.issue(attempt('right-password', ip)))).toBe('ok');
  });

  it('ends the lock 15 minutes after the fifth failure, not 15 minutes after a later attempt', async () => {
    const ip = '198.51.100.7';
    for (let index = 0; index < 5; index += 1) await outcomeOf(auth.tokens.issue(attempt('wrong', ip)));
    auth.harness.clock.advance(10 * 60 * 1000);
    const locked = await auth.tokens.issue(attempt('right-password', ip)).catch((error: DomainError) => error);
    expect((locked as DomainError).code).toBe('login_locked');
    expect((locked as DomainError).options.retryAfter).toBe(5 * 60);
    auth.harness.clock.advance(5 * 60 * 1000 + 1000);
    expect(await outcomeOf(auth.tokens.issue(attempt('right-password', ip)))).toBe('ok');
  });

  it('locks a pair whose 5 failures fall within 15 minutes though the first window ran out', async () => {
    const ip = '198.51.100.8';
    expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    auth.harness.clock.advance(14 * 60 * 1000);
    for (let index = 0; index < 4; index += 1)
      expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    auth.harness.clock.advance(60 * 1000);
    const locked = await auth.tokens.issue(attempt('right-password', ip)).catch((error: DomainError) => error);
    expect((locked as DomainError).code).toBe('login_locked');
    expect((locked as DomainError).options.retryAfter).toBe(14 * 60);
  });

  it('locks a pair at any 5 failures within 15 minutes, also when they straddle the end of a window', async () => {
    const ip = '198.51.100.11';
    expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    auth.harness.clock.advance(14 * 60 * 1000);
    for (let index = 0; index < 3; index += 1)
      expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    // The first failure is over 15 minutes old now; the three others are a minute old.
    auth.harness.clock.advance(61 * 1000);
    for (let index = 0; index < 2; index += 1)
      expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    // Five failures within 61 seconds: the fifth starts the lock.
    const locked = await auth.tokens.issue(attempt('right-password', ip)).catch((error: DomainError) => error);
    expect((locked as DomainError).code).toBe('login_locked');
    expect((locked as DomainError).options.retryAfter).toBe(15 * 60);
  });

  it('gives back the fifth slot, and the lock it armed, when identity did not answer', async () => {
    const ip = '198.51.100.9';
    for (let index = 0; index < 4; index += 1) await outcomeOf(auth.tokens.issue(attempt('wrong', ip)));
    await expect(auth.tokens.issue(attempt('identity-down', ip))).rejects.toThrow('identity did not answer');
    expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    expect(await outcomeOf(auth.tokens.issue(attempt('right-password', ip)))).toBe('login_locked');
  });

  it('gives a slot back only to the window it was taken in, never to the next one', async () => {
    const ip = '198.51.100.10';
    // An attempt at the end of a window whose check identity never answers…
    let release = () => {};
    const arrived = new Promise<void>((resolve) => {
      identity.hang = { arrived: resolve, release: new Promise<void>((done) => (release = done)) };
    });
    const hanging = auth.tokens.issue(attempt('identity-hangs', ip));
    await arrived;
    // …while the window runs out, and the next attempt starts a new one.
    auth.harness.clock.advance(15 * 60 * 1000);
    expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
    release();
    await expect(hanging).rejects.toThrow('identity did not answer');
    // The new window has had one failure: four more are checked, the sixth attempt is refused.
    const outcomes = [];
    for (let index = 0; index < 5; index += 1) outcomes.push(await outcomeOf(auth.tokens.issue(attempt('wrong', ip))));
    expect(outcomes).toEqual(['invalid_grant', 'invalid_grant', 'invalid_grant', 'invalid_grant', 'login_locked']);
  });

  it('leaves other IPs of the same account alone', async () => {
    for (let index = 0; index < 6; index += 1) await outcomeOf(auth.tokens.issue(attempt('wrong', '198.51.100.2')));
    expect(await outcomeOf(auth.tokens.issue(attempt('wrong', '198.51.100.2')))).toBe('login_locked');
    expect(await outcomeOf(auth.tokens.issue(attempt('right-password', '198.51.100.3')))).toBe('ok');
  });

  it('locks unknown usernames the same way', async () => {
    const statuses = [];
    for (let index = 0; index < 6; index += 1) {
      statuses.push(await outcomeOf(auth.tokens.issue(attempt('whatever', '198.51.100.4', 'nobody@example.test'))));
    }
    expect(statuses).toEqual([
      'invalid_grant',
      'invalid_grant',
      'invalid_grant',
      'invalid_grant',
      'invalid_grant',
      'login_locked',
    ]);
  });

  it('resets the count on success', async () => {
    const ip = '198.51.100.5';
    for (let index = 0; index < 4; index += 1) await outcomeOf(auth.tokens.issue(attempt('wrong', ip)));
    expect(await outcomeOf(auth.tokens.issue(attempt('right-password', ip)))).toBe('ok');
    for (let index = 0; index < 5; index += 1)
      expect(await outcomeOf(auth.tokens.issue(attempt('wrong', ip)))).toBe('invalid_grant');
  });

  it('checks at most 5 passwords when 20 wrong attempts arrive at once', async () => {
    const before = identity.checks;
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => outcomeOf(auth.tokens.issue(attempt('wrong', '198.51.100.6')))),
    );
    expect(outcomes.filter((code) => code === 'invalid_grant')).toHaveLength(5);
    expect(outcomes.filter((code) => code === 'login_locked')).toHaveLength(15);
    expect(identity.checks - before).toBe(5);
  });
});
