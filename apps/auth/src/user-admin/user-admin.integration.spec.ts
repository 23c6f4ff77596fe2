import { AccessTokenVerifier, Caller } from '@acct/access-token';
import { ACCESS_TOKEN_VERIFIER } from '@acct/grpc';
import { decodeJwt } from 'jose';
import { generateSync } from 'otplib';

import { VerifiedUser } from '../identity/identity.client';
import { MfaService } from '../mfa/mfa.service';
import { RecoveryCodesService } from '../mfa/recovery-codes.service';
import { useAuthOnTestDatabase } from '../test-support/auth-on-test-database';
import { outcomeOf, passwordLogin } from '../test-support/login-requests';
import { refusal } from '../test-support/refusal';
import { TokenService } from '../tokens/token.service';
import { RemoveMfaService } from './remove-mfa.service';
import { UnlockUserService } from './unlock-user.service';

jest.setTimeout(60_000);

const ORG = '4c2f4c1e-8d3a-4f5b-a6c7-d8e9f0a1b2c3';
const OTHER_ORG = '2f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
const PASSWORD = 'right-password';
type Account = VerifiedUser & { phone?: string };
const user = (id: string, email: string, roles: string[], orgId = ORG, phone?: string): Account => ({
  id,
  orgId,
  email,
  status: 'active',
  roles,
  phone,
});
const ADMIN = user('8c9e6679-7425-40de-944b-e07fc1f90ae7', 'ada@example.test', ['admin']);
const MEMBER = user('4d1c8a2b-5e4f-4a6b-9c7d-8e9f0a1b2c3d', 'bob@example.test', ['member'], ORG, '+8613800138000');
const VIEWER = user('6a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d', 'cy@example.test', ['viewer']);
const NEIGHBOUR = user('9e1c8a2b-5e4f-4a6b-9c7d-8e9f0a1b2c3d', 'dan@example.test', ['member']);
const STRANGER = user('1b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', 'eve@example.test', ['admin'], OTHER_ORG);
const USERS = [ADMIN, MEMBER, VIEWER, NEIGHBOUR, STRANGER];

const claimsOf = (token: string) => decodeJwt(token) as { sub: string; org_id: string };

/** Admins identity no longer holds for one (disabled, deleted or demoted), whatever their tokens say. */
const formerAdmins = new Set<string>();

/** Runs while identity checks a password, when a test sets it (to act while a request waits for the check). */
let duringPasswordCheck: (() => Promise<void>) | undefined;

/** Identity as auth sees it: password checks, and GetUser with the caller's token (its own org only). */
const identity = {
  isActiveAdmin: (token: string) => {
    const self = USERS.find((u) => u.id === claimsOf(token).sub);
    return Promise.resolve(!!self?.roles.includes('admin') && !formerAdmins.has(self.id));
  },
  verifyPassword: async (email: string, password: string) => {
    const during = duringPasswordCheck;
    duringPasswordCheck = undefined;
    await during?.();
    return password === PASSWORD ? USERS.find((u) => u.email === email) : undefined;
  },
  emailOf: (token: string) => Promise.resolve(USERS.find((u) => u.id === claimsOf(token).sub)?.email),
  loginNamesOf: (token: string, userId: string) => {
    // Identity's ids are Postgres uuids: any letter case names the same user.
    const id = userId === 'me' ? claimsOf(token).sub : userId.toLowerCase();
    const found = USERS.find((u) => u.id === id && u.orgId === claimsOf(token).org_id);
    return Promise.resolve(found ? { id: found.id, email: found.email, phone: found.phone } : undefined);
  },
};

describe("an admin's unlock and MFA removal, and recovery codes (real Postgres, injected clock)", () => {
  const auth = useAuthOnTestDatabase({ identityClient: identity });
  let tokens: TokenService;
  let verifier: AccessTokenVerifier;
  let unlocks: UnlockUserService;
  let removals: RemoveMfaService;
  let recoveryCodes: RecoveryCodesService;
  const signedIn = new Map<string, { caller: Caller; token: string }>();

  let ipCounter = 0;
  const freshIp = () => `198.51.100.${++ipCounter}`;
  const login = (who: Account, fields: { password?: string; mfaCode?: string; clientIp?: string } = {}) =>
    tokens.issue(passwordLogin({ username: who.email, clientIp: freshIp(), ...fields }));
  /** The account's caller and access token (signed in once, before any test turns its MFA on). */
  const as = (who: Account) => {
    const session = signedIn.get(who.id);
    if (!session) throw new Error(`${who.email} is not signed in`);
    return session;
  };

  /** Turns TOTP on for `who`; answers a function giving the code of the current (fake) time. */
  async function enableMfa(who: Account): Promise<() => string> {
    const mfa = auth.harness.get(MfaService);
    const { caller, token } = as(who);
    const { secret } = await mfa.enroll(caller, token, PASSWORD);
    const code = () => generateSync({ secret, epoch: Math.floor(auth.harness.clock.now() / 1000) });
    await mfa.confirm(caller, code());
    auth.harness.clock.advance(30_000);
    return code;
  }

  /** The admin audit's entries of `action` on `who`, oldest first. */
  const auditOf = (who: Account, action: string) =>
    auth.database.query<{ org_id: string; actor_id: string; target_type: string; details: unknown }>(
      'SELECT org_id, actor_id, target_type, details FROM admin_audit WHERE target_id = $1 AND action = $2 ORDER BY at',
      [who.id, action],
    );
  const count = async (sql: string, parameters: unknown[]) =>
    Number((await auth.database.query<{ n: string }>(sql, parameters))[0].n);

  beforeAll(async () => {
    tokens = auth.tokens;
    verifier = auth.harness.get<AccessTokenVerifier>(ACCESS_TOKEN_VERIFIER as never);
    unlocks = auth.harness.get(UnlockUserService);
    removals = auth.harness.get(RemoveMfaService);
    recoveryCodes = auth.harness.get(RecoveryCodesService);
    for (const who of USERS) {
      const { accessToken } = await login(who);
      signedIn.set(who.id, { caller: await verifier.verify(accessToken), token: accessToken });
    }
  });

  describe('DELETE /v2/users/{id}/lockout', () => {
    it("clears the user's locked (username, IP) pairs: its right password works again from there", async () => {
      const ip = freshIp();
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect(await outcomeOf(login(MEMBER, { password: 'wrong', clientIp: ip }))).toBe('invalid_grant');
      }
      expect(await outcomeOf(login(MEMBER, { clientIp: ip }))).toBe('login_locked');
      await unlocks.unlock(as(ADMIN).caller, as(ADMIN).token, MEMBER.id);
      expect(await outcomeOf(login(MEMBER, { clientIp: ip }))).toBe('ok');
      expect(await auditOf(MEMBER, 'user.lockout_cleared')).toEqual([
        { org_id: ORG, actor_id: ADMIN.id, target_type: 'user', details: null },
      ]);
    });

    it('clears the account-wide ceiling and the counts under every login key (e-mail, phone, canonical)', async () => {
      const keys = [MEMBER.email, MEMBER.phone!, `user:${MEMBER.id}`, `email:${MEMBER.email}`];
      for (const key of [...keys, NEIGHBOUR.email]) {
        await auth.database.query(
          `INSERT INTO login_account_throttles (username, failures, window_started_at, refused) VALUES ($1, 100, $2, 3)
           ON CONFLICT (username) DO UPDATE SET failures = 100, refused = 3, window_started_at = $2`,
          [key, new Date(auth.harness.clock.now())],
        );
        await auth.database.query(
          `INSERT INTO login_throttles (username, client_ip, attempts, window_started_at, locked_until) VALUES ($1, '192.0.2.1', 6, $2, $3)`,
          [key, new Date(auth.harness.clock.now()), new Date(auth.harness.clock.now() + 900_000)],
        );
      }
      // The ceiling is spent: even the right password from a new address is refused.
      expect(await outcomeOf(login(MEMBER))).toBe('login_locked');
      await unlocks.unlock(as(ADMIN).caller, as(ADMIN).token, MEMBER.id);
      const left = (table: string) => count(`SELECT count(*) AS n FROM ${table} WHERE username = ANY($1)`, [keys]);
      expect(await left('login_throttles')).toBe(0);
      expect(await left('login_account_throttles')).toBe(0);
      expect(await outcomeOf(login(MEMBER))).toBe('ok');
      // Another user's lock stays.
      expect(await count('SELECT count(*) AS n FROM login_throttles WHERE username = $1', [NEIGHBOUR.email])).toBe(1);
      expect(await outcomeOf(login(NEIGHBOUR))).toBe('login_locked');
      await unlocks.unlock(as(ADMIN).caller, as(ADMIN).token, NEIGHBOUR.id);
      expect(await outcomeOf(login(NEIGHBOUR))).toBe('ok');
    });

    it('is for admins of the user’s org only: member and viewer 403, another org’s admin and unknown ids 404', async () => {
      for (const who of [MEMBER, VIEWER]) {
        expect(await refusal(unlocks.unlock(as(who).caller, as(who).token, NEIGHBOUR.id))).toMatchObject({
          code: 'forbidden',
          status: 403,
        });
      }
      for (const id of [NEIGHBOUR.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        expect(await refusal(unlocks.unlock(as(STRANGER).caller, as(STRANGER).token, id))).toMatchObject({
          code: 'not_found',
          status: 404,
        });
      }
      const withoutWrite = { ...as(ADMIN).caller, scopes: new Set(['users:read']) };
      expect(await refusal(unlocks.unlock(withoutWrite, as(ADMIN).token, NEIGHBOUR.id))).toMatchObject({
        code: 'insufficient_scope',
      });
    });
  });

  describe('DELETE /v2/users/{id}/mfa by an admin', () => {
    it('refuses an admin identity no longer holds for one, whatever its token says', async () => {
      // Disabled, deleted or demoted a moment ago: its token works until the revocation arrives.
      formerAdmins.add(ADMIN.id);
      try {
        expect(await refusal(unlocks.unlock(as(ADMIN).caller, as(ADMIN).token, NEIGHBOUR.id))).toMatchObject({
          code: 'forbidden',
        });
        expect(await refusal(removals.remove(as(ADMIN).caller, as(ADMIN).token, VIEWER.id, '', ''))).toMatchObject({
          code: 'forbidden',
        });
      } finally {
        formerAdmins.delete(ADMIN.id);
      }
    });

    it("removes the user's factor and recovery codes: its password alone signs in again", async () => {
      const code = await enableMfa(VIEWER);
      await recoveryCodes.create(as(VIEWER).caller, as(VIEWER).token, PASSWORD);
      expect(await outcomeOf(login(VIEWER))).toBe('mfa_required');
      // Member and another org's admin cannot; the factor survives their attempts.
      expect(await refusal(removals.remove(as(MEMBER).caller, as(MEMBER).token, VIEWER.id, '', ''))).toMatchObject({
        code: 'forbidden',
      });
      expect(await refusal(removals.remove(as(STRANGER).caller, as(STRANGER).token, VIEWER.id, '', ''))).toMatchObject({
        code: 'not_found',
      });
      expect(await outcomeOf(login(VIEWER, { mfaCode: code() }))).toBe('ok');

      await removals.remove(as(ADMIN).caller, as(ADMIN).token, VIEWER.id, '', '');
      expect(await outcomeOf(login(VIEWER))).toBe('ok');
      expect(await auditOf(VIEWER, 'user.mfa_removed')).toEqual([
        { org_id: ORG, actor_id: ADMIN.id, target_type: 'user', details: { by: 'admin' } },
      ]);
      expect(await count('SELECT count(*) AS n FROM mfa_totp WHERE user_id = $1', [VIEWER.id])).toBe(0);
      expect(await count('SELECT count(*) AS n FROM mfa_recovery_codes WHERE user_id = $1', [VIEWER.id])).toBe(0);
      // Again: nothing left to remove, the same success.
      await removals.remove(as(ADMIN).caller, as(ADMIN).token, VIEWER.id, '', '');
    });
  });

  describe('DELETE /v2/users/me/mfa by the user itself', () => {
    let code: () => string;
    beforeAll(async () => {
      code = await enableMfa(MEMBER);
    });

    it('needs both the password and a code: missing ones are validation_failed, nothing removed', async () => {
      const error = await refusal(removals.remove(as(MEMBER).caller, as(MEMBER).token, 'me', '', ''));
      expect(error).toMatchObject({ code: 'validation_failed', status: 400 });
      expect(error.options.errors?.map((e) => e.field)).toEqual(['password', 'mfa_code']);
      expect(await outcomeOf(login(MEMBER))).toBe('mfa_required');
    });

    it('refuses a wrong password with 403 forbidden and a wrong or spent code with 400 invalid_mfa_code', async () => {
      auth.harness.clock.advance(30_000);
      for (const wrong of ['wrong', 'Right-password']) {
        expect(await refusal(removals.remove(as(MEMBER).caller, as(MEMBER).token, 'me', wrong, code()))).toMatchObject({
          code: 'forbidden',
          status: 403,
        });
      }
      const spent = code();
      expect(await outcomeOf(login(MEMBER, { mfaCode: spent }))).toBe('ok');
      for (const wrong of ['000000', spent, 'AAAA-BBBB-CCCC-DDDD']) {
        expect(
          await refusal(removals.remove(as(MEMBER).caller, as(MEMBER).token, 'me', PASSWORD, wrong)),
        ).toMatchObject({ code: 'invalid_mfa_code', status: 400 });
      }
      // Five failures in all: the MFA settings are locked, even for the right password and code.
      auth.harness.clock.advance(30_000);
      expect(await refusal(removals.remove(as(MEMBER).caller, as(MEMBER).token, 'me', PASSWORD, code()))).toMatchObject(
        { code: 'login_locked' },
      );
      expect(await outcomeOf(login(MEMBER))).toBe('mfa_required');
      auth.harness.clock.advance(16 * 60_000);
    });

    it('removes the factor with the password and a current TOTP code, and records it as by the user itself', async () => {
      expect(await auditOf(MEMBER, 'user.mfa_removed')).toEqual([]);
      await removals.remove(as(MEMBER).caller, as(MEMBER).token, MEMBER.id, PASSWORD, code());
      expect(await outcomeOf(login(MEMBER))).toBe('ok');
      expect(await auditOf(MEMBER, 'user.mfa_removed')).toEqual([
        { org_id: ORG, actor_id: MEMBER.id, target_type: 'user', details: { by: 'self' } },
      ]);
    });

    it('treats an admin naming its own id in another letter case as itself: password and code still needed', async () => {
      const adminCode = await enableMfa(ADMIN);
      const ownId = ADMIN.id.toUpperCase();
      expect(await refusal(removals.remove(as(ADMIN).caller, as(ADMIN).token, ownId, '', ''))).toMatchObject({
        code: 'validation_failed',
        status: 400,
      });
      expect(await count('SELECT count(*) AS n FROM mfa_totp WHERE user_id = $1', [ADMIN.id])).toBe(1);
      expect(await auditOf(ADMIN, 'user.mfa_removed')).toEqual([]);
      await removals.remove(as(ADMIN).caller, as(ADMIN).token, ownId, PASSWORD, adminCode());
      expect(await auditOf(ADMIN, 'user.mfa_removed')).toEqual([
        { org_id: ORG, actor_id: ADMIN.id, target_type: 'user', details: { by: 'self' } },
      ]);
    });

    it('also takes an unused recovery code as the current code (the authenticator is lost)', async () => {
      code = await enableMfa(MEMBER);
      const { codes } = await recoveryCodes.create(as(MEMBER).caller, as(MEMBER).token, PASSWORD);
      await removals.remove(as(MEMBER).caller, as(MEMBER).token, 'me', PASSWORD, codes[3].toLowerCase());
      expect(await outcomeOf(login(MEMBER))).toBe('ok');
    });

    it('keeps counting wrong codes after a right password elsewhere: enrolment does not reset the pair', async () => {
      // A token holder who knows the password guessed removal codes 4 at a time, each batch followed
      // by an enrolment with the right password (409, no side effect) that cleared the shared pair:
      // some 48 code guesses a minute instead of 5 per 15 minutes.
      await enableMfa(VIEWER);
      const { caller, token } = as(VIEWER);
      const guess = () => refusal(removals.remove(caller, token, 'me', PASSWORD, '000000'));
      for (let i = 0; i < 4; i += 1) expect(await guess()).toMatchObject({ code: 'invalid_mfa_code' });
      expect(await refusal(auth.harness.get(MfaService).enroll(caller, token, PASSWORD))).toMatchObject({
        code: 'mfa_already_enabled',
      });
      expect(await refusal(recoveryCodes.create(caller, token, 'wrong'))).toMatchObject({ code: 'forbidden' });
      expect(await guess()).toMatchObject({ code: 'login_locked' });
      auth.harness.clock.advance(16 * 60_000);
    });

    it('does not remove, without a code, a factor confirmed while the removal checked the password', async () => {
      // The user enrols and confirms its authenticator while a removal (password only: the factor it read
      // was pending, so it asked for no code) waits for identity's password check. The confirmation
      // answered `enabled: true`; the removal may not then take the factor away without its code.
      const mfa = auth.harness.get(MfaService);
      const { caller, token } = as(NEIGHBOUR);
      const { secret } = await mfa.enroll(caller, token, PASSWORD);
      let confirmed: unknown;
      duringPasswordCheck = async () => {
        confirmed = await mfa.confirm(
          caller,
          generateSync({ secret, epoch: Math.floor(auth.harness.clock.now() / 1000) }),
        );
      };
      const removal = await removals.remove(caller, token, 'me', PASSWORD, '').then(
        () => 'removed',
        (error: { code?: string }) => error.code,
      );
      expect(confirmed).toMatchObject({ enabled: true });
      expect(removal).toBe('validation_failed');
      expect(await count('SELECT count(*) AS n FROM mfa_totp WHERE user_id = $1', [NEIGHBOUR.id])).toBe(1);
      auth.harness.clock.advance(30_000);
      expect(await outcomeOf(login(NEIGHBOUR))).toBe('mfa_required');
      // As the tests below expect it: without a factor.
      await removals.remove(as(ADMIN).caller, as(ADMIN).token, NEIGHBOUR.id, '', '');
    });
  });

  describe('POST /v2/users/me/mfa/recovery-codes', () => {
    let code: () => string;

    it('refuses while two-step verification is off (409 mfa_not_enrolled), and a wrong password (403)', async () => {
      expect(await refusal(recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, PASSWORD))).toMatchObject({
        code: 'mfa_not_enrolled',
        status: 409,
      });
      code = await enableMfa(NEIGHBOUR);
      expect(await refusal(recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, 'wrong'))).toMatchObject({
        code: 'forbidden',
        status: 403,
      });
      expect(await refusal(recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, ''))).toMatchObject({
        code: 'validation_failed',
      });
    });

    it('answers 10 distinct codes, of which only hashes are stored', async () => {
      const { codes, createdAt } = await recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, PASSWORD);
      expect(codes).toHaveLength(10);
      expect(new Set(codes).size).toBe(10);
      expect(createdAt).toBe(new Date(auth.harness.clock.now()).toISOString());
      const rows = await auth.database.query<{ code_hash: string }>(
        'SELECT code_hash FROM mfa_recovery_codes WHERE user_id = $1',
        [NEIGHBOUR.id],
      );
      expect(rows).toHaveLength(10);
      const stored = JSON.stringify(rows);
      for (const one of codes) {
        expect(stored).not.toContain(one);
        expect(stored).not.toContain(one.replaceAll('-', ''));
      }
    });

    it('accepts each code once as mfa_code at the password grant; a TOTP code still works', async () => {
      const { codes } = await recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, PASSWORD);
      expect(await outcomeOf(login(NEIGHBOUR, { mfaCode: codes[0] }))).toBe('ok');
      expect(await outcomeOf(login(NEIGHBOUR, { mfaCode: codes[0] }))).toBe('invalid_grant');
      expect(await outcomeOf(login(NEIGHBOUR, { mfaCode: codes[1].replaceAll('-', ' ') }))).toBe('ok');
      auth.harness.clock.advance(30_000);
      expect(await outcomeOf(login(NEIGHBOUR, { mfaCode: code() }))).toBe('ok');
    });

    it('lets exactly one of many concurrent logins with the same code succeed', async () => {
      const { codes } = await recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, PASSWORD);
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => outcomeOf(login(NEIGHBOUR, { mfaCode: codes[5] }))),
      );
      expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === 'invalid_grant')).toHaveLength(7);
    });

    it('invalidates the previous set when a new one is created', async () => {
      const old = await recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, PASSWORD);
      const fresh = await recoveryCodes.create(as(NEIGHBOUR).caller, as(NEIGHBOUR).token, PASSWORD);
      expect(await outcomeOf(login(NEIGHBOUR, { mfaCode: old.codes[0] }))).toBe('invalid_grant');
      expect(await outcomeOf(login(NEIGHBOUR, { mfaCode: fresh.codes[0] }))).toBe('ok');
      expect(await count('SELECT count(*) AS n FROM mfa_recovery_codes WHERE user_id = $1', [NEIGHBOUR.id])).toBe(10);
    });
  });
});
