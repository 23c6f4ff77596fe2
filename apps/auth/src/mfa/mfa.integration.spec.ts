import { Caller } from '@acct/access-token';
import { generateSync } from 'otplib';

import { VerifiedUser } from '../identity/identity.client';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { outcomeOf, passwordLogin } from '../test-support/login-requests';
import { refusal } from '../test-support/refusal';
import { TokenRequest } from '../tokens/grants/grant';
import { TokenService } from '../tokens/token.service';
import { MfaService } from './mfa.service';
import { RecoveryCodesService } from './recovery-codes.service';

const ORG = '3f0e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f';
const USER: VerifiedUser = {
  id: '8c0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
  orgId: ORG,
  email: 'ada@example.test',
  status: 'active',
  roles: ['member'],
};
const PLAIN_USER: VerifiedUser = { ...USER, id: '9d0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', email: 'bob@example.test' };

/** Identity as auth sees it: two accounts, a password check with a little latency, and "me". */
const identity = {
  verifyPassword: (email: string, password: string) =>
    new Promise<VerifiedUser | undefined>((resolve) => {
      const user = [USER, PLAIN_USER].find((one) => one.email === email);
      setTimeout(() => resolve(user && password === 'right-password' ? user : undefined), 5);
    }),
  emailOf: () => Promise.resolve(USER.email),
};

const callerOf = (fields: Partial<Caller> = {}): Caller => ({
  subject: USER.id,
  kind: 'user',
  orgId: ORG,
  clientId: 'account-platform-web',
  scopes: new Set(['users:read', 'system:read']),
  roles: ['member'],
  tokenId: 'jti',
  expiresAt: Date.now() + 60_000,
  ...fields,
});

const login = (fields: Partial<TokenRequest>): TokenRequest => passwordLogin({ username: USER.email, ...fields });

describe('MFA with TOTP (real Postgres, injected clock)', () => {
  const auth = useAuthOnTestDatabase({ identityClient: identity });
  let tokens: TokenService;
  let mfa: MfaService;
  let secret: string;
  /** The code of the step `offset` steps from the (fake) current time. */
  const code = (offset = 0) =>
    generateSync({ secret, epoch: Math.floor(auth.harness.clock.now() / 1000) + offset * 30 });
  /** A step no earlier test has used: every code before it is spent or stale. */
  const nextStep = () => auth.harness.clock.advance(90_000);

  beforeAll(() => {
    tokens = auth.tokens;
    mfa = auth.harness.get(MfaService);
  });

  it('refuses enrolment without the current password, or with a wrong one, and locks it after 5 wrong ones', async () => {
    // Issue 11 item 10: an access token alone (a stolen one) cannot bind an authenticator.
    expect(await refusal(mfa.enroll(callerOf(), 'token', ''))).toMatchObject({
      code: 'validation_failed',
      status: 400,
    });
    for (const password of ['wrong-1', 'wrong-2', 'Right-password', 'right-password ', 'x']) {
      expect(await refusal(mfa.enroll(callerOf(), 'token', password))).toMatchObject({
        code: 'forbidden',
        status: 403,
      });
    }
    // Five wrong passwords lock enrolment for the account (no password oracle for a token holder).
    expect(await refusal(mfa.enroll(callerOf(), 'token', 'right-password'))).toMatchObject({ code: 'login_locked' });
    const rows = await auth.database.query<{ n: string }>('SELECT count(*) AS n FROM mfa_totp WHERE user_id = $1', [
      USER.id,
    ]);
    expect(Number(rows[0].n)).toBe(0);
    auth.harness.clock.advance(16 * 60_000);
  });

  it('enrols the calling user with a base32 secret and an otpauth URI, stored encrypted', async () => {
    const enrolled = await mfa.enroll(callerOf(), 'caller-token', 'right-password');
    secret = enrolled.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(enrolled.otpauthUri);
    expect(`${uri.protocol}//${uri.host}`).toBe('otpauth://totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/Account Platform:${USER.email}`);
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toBe('Account Platform');
    const [row] = await auth.database.query<{ secret: string; confirmed_at: Date | null }>(
      'SELECT secret, confirmed_at FROM mfa_totp WHERE user_id = $1',
      [USER.id],
    );
    expect(row.confirmed_at).toBeNull();
    expect(row.secret).not.toContain(secret);
    expect(row.secret.startsWith('aes256gcm:')).toBe(true);
  });

  it('does not ask an enrolled but unconfirmed account for a code', async () => {
    expect(await outcomeOf(tokens.issue(login({ clientIp: '203.0.113.11' })))).toBe('ok');
  });

  it('refuses a wrong confirmation code with invalid_mfa_code and leaves MFA off', async () => {
    const wrong = String((Number(code()) + 1) % 1_000_000).padStart(6, '0');
    const error = await refusal(mfa.confirm(callerOf(), wrong));
    expect(error.code).toBe('invalid_mfa_code');
    expect(error.status).toBe(400);
    expect(await refusal(mfa.confirm(callerOf(), 'abcdef'))).toMatchObject({ code: 'invalid_mfa_code' });
    const [row] = await auth.database.query<{ confirmed_at: Date | null }>(
      'SELECT confirmed_at FROM mfa_totp WHERE user_id = $1',
      [USER.id],
    );
    expect(row.confirmed_at).toBeNull();
  });

  it('refuses enrolment and confirmation to client_credentials callers', async () => {
    const client = callerOf({ kind: 'client', subject: 'provisioner', scopes: new Set(['users:read']) });
    expect(await refusal(mfa.enroll(client, 'token', 'right-password'))).toMatchObject({ code: 'forbidden' });
    expect(await refusal(mfa.confirm(client, code()))).toMatchObject({ code: 'forbidden' });
  });

  it('enables MFA on a correct code, whose step then cannot log in', async () => {
    const confirmingCode = code();
    const confirmed = await mfa.confirm(callerOf(), confirmingCode);
    expect(confirmed).toEqual({ enabled: true, confirmedAt: new Date(auth.harness.clock.now()).toISOString() });
    const error = await refusal(tokens.issue(login({ mfaCode: confirmingCode, clientIp: '203.0.113.12' })));
    expect(error.code).toBe('invalid_grant');
  });

  it('refuses to re-enrol or re-confirm once MFA is enabled (409 mfa_already_enabled), keeping the secret', async () => {
    expect(await refusal(mfa.enroll(callerOf(), 'token', 'right-password'))).toMatchObject({
      code: 'mfa_already_enabled',
      status: 409,
    });
    expect(await refusal(mfa.confirm(callerOf(), code()))).toMatchObject({ code: 'mfa_already_enabled' });
    nextStep();
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(), clientIp: '203.0.113.13' })))).toBe('ok');
  });

  it('answers 403 mfa_required when the code is missing, with the OAuth members', async () => {
    const error = await refusal(tokens.issue(login({ clientIp: '203.0.113.14' })));
    expect(error.code).toBe('mfa_required');
    expect(error.status).toBe(403);
    expect(error.options.extensions).toMatchObject({ error: 'mfa_required', error_description: expect.any(String) });
  });

  it('accepts a valid code once and refuses its replay, recording why in the audit', async () => {
    nextStep();
    const current = code();
    expect(await outcomeOf(tokens.issue(login({ mfaCode: current, clientIp: '203.0.113.15' })))).toBe('ok');
    const replay = await refusal(tokens.issue(login({ mfaCode: current, clientIp: '203.0.113.16' })));
    expect(replay.code).toBe('invalid_grant');
    expect(replay.status).toBe(400);
    const audit = await auth.database.query<{ client_ip: string; reason: string }>(
      "SELECT client_ip, reason FROM login_audit WHERE client_ip IN ('203.0.113.14', '203.0.113.15', '203.0.113.16') ORDER BY at, client_ip",
    );
    expect(audit).toEqual([
      { client_ip: '203.0.113.14', reason: 'mfa_required' },
      { client_ip: '203.0.113.15', reason: 'issued' },
      { client_ip: '203.0.113.16', reason: 'mfa_code_reused' },
    ]);
  });

  it('issues exactly one token when the same code is submitted twice at once', async () => {
    nextStep();
    const current = code();
    const outcomes = await Promise.all(
      ['203.0.113.17', '203.0.113.18', '203.0.113.19', '203.0.113.20'].map((clientIp) =>
        outcomeOf(tokens.issue(login({ mfaCode: current, clientIp }))),
      ),
    );
    expect(outcomes.filter((result) => result === 'ok')).toHaveLength(1);
    expect(outcomes.filter((result) => result === 'invalid_grant')).toHaveLength(3);
  });

  it('accepts codes one step either side of now, never older than the last accepted one', async () => {
    nextStep();
    const ip = '203.0.113.21';
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(-2), clientIp: ip })))).toBe('invalid_grant');
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(2), clientIp: ip })))).toBe('invalid_grant');
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(-1), clientIp: ip })))).toBe('ok');
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(1), clientIp: ip })))).toBe('ok');
    // The next step's code was taken, so the current one (an earlier step) is spent too.
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(0), clientIp: ip })))).toBe('invalid_grant');
  });

  it('counts wrong codes as failed logins: five lock the (username, IP) pair', async () => {
    nextStep();
    const ip = '203.0.113.22';
    for (let index = 0; index < 5; index += 1) {
      expect(await outcomeOf(tokens.issue(login({ mfaCode: '000000', clientIp: ip })))).toBe('invalid_grant');
    }
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(), clientIp: ip })))).toBe('login_locked');
  });

  it('counts a missing code as an attempt that never resets the lockout count', async () => {
    nextStep();
    const ip = '203.0.113.23';
    for (let index = 0; index < 3; index += 1) {
      expect(await outcomeOf(tokens.issue(login({ password: 'wrong', clientIp: ip })))).toBe('invalid_grant');
    }
    expect(await outcomeOf(tokens.issue(login({ clientIp: ip })))).toBe('mfa_required');
    expect(await outcomeOf(tokens.issue(login({ password: 'wrong', clientIp: ip })))).toBe('invalid_grant');
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(), clientIp: ip })))).toBe('login_locked');
  });

  it('spends no code on a login refused for its scope: the same recovery code and TOTP code sign in after it', async () => {
    nextStep();
    const { codes } = await auth.harness.get(RecoveryCodesService).create(callerOf(), 'token', 'right-password');
    const ip = '203.0.113.25';
    // A member asking for users:write, a scope its role does not hold: refused whatever the code.
    for (const mfaCode of [codes[0], code()]) {
      expect(await outcomeOf(tokens.issue(login({ scope: 'users:write', mfaCode, clientIp: ip })))).toBe(
        'invalid_scope',
      );
    }
    expect(await outcomeOf(tokens.issue(login({ mfaCode: codes[0], clientIp: ip })))).toBe('ok');
    expect(await outcomeOf(tokens.issue(login({ mfaCode: code(), clientIp: ip })))).toBe('ok');
  });

  it('leaves accounts without MFA alone', async () => {
    expect(await outcomeOf(tokens.issue(login({ username: PLAIN_USER.email, clientIp: '203.0.113.24' })))).toBe('ok');
  });
});
