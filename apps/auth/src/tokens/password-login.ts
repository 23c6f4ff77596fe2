import { DomainError } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';

import { OAuthErrors } from '../oauth/oauth-errors';
import { IdentityClient, VerifiedUser } from './identity.client';
import { LOGIN_POLICIES, LoginAttempt, LoginPolicy } from './login-policy';

/** The user's password, or a user whose password was already checked in a first step (login page MFA). */
export type LoginCredential = { password: string } | { passwordCheckedFor: VerifiedUser };

/** The attempt the login policies see, from a request's who-asks fields and its normalised username. */
export const attemptOf = (
  request: Pick<LoginAttempt, 'clientIp' | 'deviceId' | 'userAgent' | 'mfaCode'>,
  username: string,
): LoginAttempt => ({
  username,
  clientIp: request.clientIp,
  deviceId: request.deviceId,
  userAgent: request.userAgent,
  mfaCode: request.mfaCode,
});

const pendingMfa = new WeakMap<DomainError, VerifiedUser>();

/**
 * The user an `mfa_required` refusal was for: the password was right, only the code is missing
 * (the login page's second step continues from there); undefined for any other refusal.
 */
export const userAwaitingMfa = (error: unknown): VerifiedUser | undefined =>
  error instanceof DomainError ? pendingMfa.get(error) : undefined;

/**
 * One password login (contract §4), for the password grant and the authorization endpoint's login
 * page alike: the login policies (MFA, the (username, IP) lockout, the account-wide ceiling) around
 * identity's password check. Only an active account with a correct password (and code) gets through.
 */
@Injectable()
export class PasswordLogin {
  constructor(
    private readonly identity: IdentityClient,
    @Inject(LOGIN_POLICIES) private readonly policies: LoginPolicy[],
  ) {}

  async verify(attempt: LoginAttempt, credential: LoginCredential): Promise<VerifiedUser> {
    for (const policy of this.policies) await policy.beforePasswordCheck(attempt);
    const user =
      'password' in credential
        ? await this.identity.verifyPassword(attempt.username, credential.password)
        : credential.passwordCheckedFor;
    if (!user) {
      for (const policy of this.policies) await policy.afterFailure(attempt);
      throw OAuthErrors.badCredentials();
    }
    // Only after a correct password, so the answer reveals nothing to someone without it.
    if (user.status !== 'active') throw OAuthErrors.accountNotActive();
    try {
      for (const policy of this.policies) await policy.afterSuccess(attempt, user);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'mfa_required') pendingMfa.set(error, user);
      throw error;
    }
    return user;
  }
}
