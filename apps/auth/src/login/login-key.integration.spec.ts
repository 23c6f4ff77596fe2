import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { repositoryRoot } from '@acct/testing';

import { LoginKey, VerifiedUser } from '../identity/identity.client';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { outcomeOf, passwordLogin } from '../test-support/login-requests';

const USER: VerifiedUser = {
  id: '5c0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  orgId: '2e0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f',
  email: 'lin@example.test',
  status: 'active',
  roles: ['member'],
};
const PHONE = '+8613800138000';

/** Identity as auth sees it: one user, reachable by its e-mail and its phone (in two spellings). */
const names = new Set([USER.email, PHONE, '+86 138-0013-8000', '008613800138000']);
const identity = {
  resolveLoginKey: (username: string): Promise<LoginKey> =>
    Promise.resolve(
      names.has(username)
        ? { key: `user:${USER.id}`, userId: USER.id, orgId: USER.orgId }
        : { key: `email:${username}` },
    ),
  verifyPassword: (username: string, password: string): Promise<VerifiedUser | undefined> =>
    Promise.resolve(names.has(username) && password === 'right-password' ? USER : undefined),
};

/**
 * The SQL statements of docs/runbook.md's "Unlocking a locked login", for one account and IP: its
 * example e-mail, user id and address replaced by the given ones.
 */
function runbookUnlockStatements(account: { email: string; userId: string; ip: string }): string[] {
  const runbook = fs.readFileSync(path.join(repositoryRoot, 'docs/runbook.md'), 'utf8');
  const section = runbook.split('### Unlocking a locked login')[1]?.split('\n### ')[0] ?? '';
  const sql = /```sql\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return sql
    .split('\n')
    .map((line) => line.replace(/--.*$/, '').trim())
    .join(' ')
    .split(';')
    .map((statement) => statement.trim())
    .filter(Boolean)
    .map((statement) =>
      statement
        .replaceAll('ada@example.com', account.email)
        .replaceAll('<user id>', account.userId)
        .replaceAll('203.0.113.7', account.ip),
    );
}

describe('login key: one count per user, failures attributed to its org (real Postgres)', () => {
  const auth = useAuthOnTestDatabase({ identityClient: identity });
  const login = (username: string, password: string, clientIp: string) =>
    outcomeOf(auth.tokens.issue(passwordLogin({ username, password, clientIp })));

  it('counts failures by phone toward the e-mail and the other way round (one lockout per user and IP)', async () => {
    const ip = '198.51.100.20';
    expect(await login('+86 138-0013-8000', 'wrong', ip)).toBe('invalid_grant');
    expect(await login('008613800138000', 'wrong', ip)).toBe('invalid_grant');
    expect(await login(PHONE, 'wrong', ip)).toBe('invalid_grant');
    expect(await login(USER.email, 'wrong', ip)).toBe('invalid_grant');
    expect(await login(USER.email, 'wrong', ip)).toBe('invalid_grant');
    // Five failures in four spellings: the pair is locked whichever spelling comes next.
    expect(await login(USER.email, 'right-password', ip)).toBe('login_locked');
    expect(await login(PHONE, 'right-password', ip)).toBe('login_locked');
    expect(await login(PHONE, 'right-password', '198.51.100.21')).toBe('ok');
  });

  it('frees the e-mail too when the phone logs in', async () => {
    const ip = '198.51.100.22';
    for (let index = 0; index < 4; index += 1) expect(await login(USER.email, 'wrong', ip)).toBe('invalid_grant');
    expect(await login(PHONE, 'right-password', ip)).toBe('ok');
    for (let index = 0; index < 4; index += 1) expect(await login(USER.email, 'wrong', ip)).toBe('invalid_grant');
    expect(await login(USER.email, 'right-password', ip)).toBe('ok');
  });

  it("lifts a user's lock with the runbook's SQL (docs/runbook.md, Unlocking a locked login)", async () => {
    const ip = '203.0.113.7';
    for (let index = 0; index < 5; index += 1) expect(await login(USER.email, 'wrong', ip)).toBe('invalid_grant');
    expect(await login(USER.email, 'right-password', ip)).toBe('login_locked');
    const statements = runbookUnlockStatements({ email: USER.email, userId: USER.id, ip });
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) await auth.database.query(statement);
    expect(await login(USER.email, 'right-password', ip)).toBe('ok');
  });

  it('attributes failed logins of a known user to it and its org, and those of unknown usernames to nobody, with one answer', async () => {
    await auth.database.query('DELETE FROM login_audit');
    expect(await login(PHONE, 'wrong', '198.51.100.23')).toBe('invalid_grant');
    expect(await login('nobody@example.test', 'wrong', '198.51.100.23')).toBe('invalid_grant');
    const rows = await auth.database.query<Record<string, string | null>>(
      'SELECT username, subject, org_id, outcome, reason FROM login_audit ORDER BY at, username',
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { username: PHONE, subject: USER.id, org_id: USER.orgId, outcome: 'failure', reason: 'invalid_grant' },
        { username: 'nobody@example.test', subject: null, org_id: null, outcome: 'failure', reason: 'invalid_grant' },
      ]),
    );
    expect(rows).toHaveLength(2);
  });

  it('refuses a username longer than any login name as a wrong password, not with an internal error', async () => {
    // Identity keys an unknown username by itself (`email:<username>`): 1,000 random CJK characters (the
    // gateway lets 1,024 through), 3 bytes each, were more than Postgres indexes (54000), so the
    // lockout's upsert failed and the login was a 500.
    const username = `${Array.from({ length: 1000 }, () => String.fromCodePoint(0x4e00 + randomInt(20_000))).join('')}@example.test`;
    expect(await login(username, 'wrong', '198.51.100.24')).toBe('invalid_grant');
    expect(await login(username.toUpperCase(), 'right-password', '198.51.100.24')).toBe('invalid_grant');
  });
});
