import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { EMAIL_MAX_LENGTH } from '@acct/user-fields';
import { Injectable } from '@nestjs/common';

import { attributeFailure } from '../audit/login-attribution';
import { IdentityClient, VerifiedUser } from '../identity/identity.client';
import { clientKeyOf, LoginSource } from '../lockout/login-source';
import { LoginThrottle } from '../lockout/login-throttle';
import { MfaPolicy } from '../mfa/mfa.policy';
import { OAuthErrors } from '../oauth/oauth-errors';

/** One password login attempt, as the login steps see it. */
export interface LoginAttempt extends LoginSource {
  /** Empty when the request has none. */
  mfaCode: string;
}

/** The attempt of a request (its who-asks fields and code) for its normalised username. */
export const attemptOf = (request: Omit<LoginAttempt, 'username'>, username: string): LoginAttempt => ({
  username,
  clientIp: clientKeyOf(request.clientIp),
  deviceId: request.deviceId,
  deviceToken: request.deviceToken ?? '',
  mfaCode: request.mfaCode,
});

/** A successful login: the user, and a new device credential for the device it came from. */
export interface LoginSuccess {
  user: VerifiedUser;
  deviceToken: string;
  /**
   * When the password was checked (ms): the user's sessions ended after it (a password set or reset,
   * disabled, deleted while the login ran) end this login too, though it ends later.
   */
  checkedAt: number;
}

/**
 * The user's password, or a user whose password was already checked in a first step (login page MFA),
 * at `checkedAt`.
 */
export type LoginCredential = { password: string } | { passwordCheckedFor: VerifiedUser; checkedAt: number };

/**
 * `mfa_required` for a user whose password was right: only the code is missing, and the login page's
 * second step continues from `user`, signed in since `checkedAt` (ms), when its password was checked.
 */
export class MfaPending extends DomainError {
  constructor(
    refusal: DomainError,
    readonly user: VerifiedUser,
    readonly checkedAt: number,
  ) {
    super(refusal.code, refusal.detail, refusal.options);
  }
}

/** The user an `mfa_required` refusal was for, and when its password was checked; undefined for any other refusal. */
export const userAwaitingMfa = (error: unknown): Pick<MfaPending, 'user' | 'checkedAt'> | undefined =>
  error instanceof MfaPending ? { user: error.user, checkedAt: error.checkedAt } : undefined;

/**
 * The checks of one password login (the password grant and the authorization endpoint's login page
 * alike), in the order contract §4 fixes. Each step may refuse with a DomainError, and then no later
 * step runs. Every count is kept under the username's login key (identity's ResolveLoginKey, asked
 * first for every username, known or not): `user:<id>` for a known user, whether its e-mail or its
 * phone was typed, so both share one lockout and one ceiling (contract §7); the normalised username
 * for anyone else. A refusal of a known user's login is attributed to it for the login audit (its
 * org's admins see it); the answer itself is the same as for an unknown username.
 *
 * 1. the (username, IP) lockout takes a slot: a locked pair is refused before anything else, without
 *    spending the account's budget;
 * 2. the account-wide ceiling takes a slot (an IP that logged in before, and a device presenting a
 *    device credential issued to this username, are exempt); 1 and 2 are one statement (LoginThrottle);
 * 3. identity checks the password (an unknown e-mail and a wrong password are the same refusal);
 *    a failed attempt keeps the slots it took: that is how failures are counted; an attempt identity
 *    did not answer (unreachable, hung, past the deadline) gives them back: nothing was checked;
 * 4. only then, so the answer reveals nothing to someone without the password, the account must be
 *    active;
 * 5. MFA: an account with a confirmed factor needs a fresh, right code; a missing or wrong code
 *    keeps the slots too (it counts as a failure and never resets a count); so does the caller's own
 *    refusal of the user (`admissible`: the scope it asks for), judged before the code is checked, so a
 *    login refused whatever its code does not use up a recovery code or a TOTP step;
 * 6. success: the pair is freed, the IP is remembered as the account's own (the ceiling's slot is
 *    given back), in one statement, and the device gets a new device credential.
 */
@Injectable()
export class PasswordLogin {
  constructor(
    private readonly throttle: LoginThrottle,
    private readonly identity: IdentityClient,
    private readonly mfa: MfaPolicy,
    private readonly clock: Clock,
  ) {}

  async verify(
    typed: LoginAttempt,
    credential: LoginCredential,
    admissible: (user: VerifiedUser) => void = () => undefined,
  ): Promise<LoginSuccess> {
    const checkedAt = 'password' in credential ? this.clock.now() : credential.checkedAt;
    // No user's login name is longer than an e-mail may be (a phone's is shorter still). Such a name is
    // refused as a wrong password before anything is counted under it: its key (identity's
    // `email:<name>` for nobody's) can be more than Postgres indexes, and the lockout's upsert failed.
    if ('password' in credential && typed.username.trim().length > EMAIL_MAX_LENGTH) throw OAuthErrors.badCredentials();
    const login =
      'password' in credential
        ? await this.identity.resolveLoginKey(typed.username)
        : {
            key: `user:${credential.passwordCheckedFor.id}`,
            userId: credential.passwordCheckedFor.id,
            orgId: credential.passwordCheckedFor.orgId,
          };
    try {
      return {
        ...(await this.steps({ ...typed, username: login.key }, typed.username, credential, checkedAt, admissible)),
        checkedAt,
      };
    } catch (refusal) {
      if (login.userId && login.orgId) attributeFailure(refusal, { subject: login.userId, orgId: login.orgId });
      throw refusal;
    }
  }

  /** Steps 1–6, counted under `attempt.username` (the login key); `typed` is what identity checks. */
  private async steps(
    attempt: LoginAttempt,
    typed: string,
    credential: LoginCredential,
    checkedAt: number,
    admissible: (user: VerifiedUser) => void,
  ): Promise<Omit<LoginSuccess, 'checkedAt'>> {
    const slots = await this.throttle.admit(attempt);
    const user =
      'password' in credential
        ? await this.identity.verifyPassword(typed, credential.password).catch(async (error: unknown) => {
            // Identity did not answer (503): the password was not checked, so the attempt is no failure.
            await this.throttle.notChecked(attempt, slots);
            throw error;
          })
        : credential.passwordCheckedFor;
    if (!user) throw OAuthErrors.badCredentials();
    if (user.status === 'disabled') throw OAuthErrors.accountDisabled();
    if (user.status !== 'active') throw OAuthErrors.accountNotActive();
    await this.mfa
      .verifyCode(user.id, attempt.mfaCode, () => admissible(user))
      .catch((refusal: unknown) => {
        throw refusal instanceof DomainError && refusal.code === 'mfa_required'
          ? new MfaPending(refusal, user, checkedAt)
          : refusal;
      });
    const deviceToken = await this.throttle.succeeded(attempt, user.id, slots);
    return { user, deviceToken };
  }
}
