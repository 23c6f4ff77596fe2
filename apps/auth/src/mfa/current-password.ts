import { Caller } from '@acct/access-token';
import { DomainError, validationFailed } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { IdentityClient } from '../identity/identity.client';
import { LockoutPolicy } from '../lockout/lockout.policy';
import { LoginSource } from '../lockout/login-source';

/**
 * The lockout pair's "address" for password checks of the MFA settings (enrolment, recovery codes,
 * removal): no client IP reaches these calls, and one pair for all three means a token holder gets 5
 * guesses per 15 minutes in all, not 5 per endpoint.
 */
const MFA_SETTINGS_SOURCE = 'mfa-enrolment';

/** An MFA settings password check that passed: the account's e-mail, its lockout pair and when it took its slot. */
export interface PasswordProof {
  email: string;
  source: LoginSource;
  slotTakenAt: Date;
}

/**
 * Changing a second factor needs the current password, so an access token alone (a stolen one) is
 * not enough. Wrong passwords count in the (username, `mfa-enrolment`) lockout pair, 5 per 15 minutes,
 * so these endpoints are no password oracle for a token holder.
 */
@Injectable()
export class CurrentPassword {
  constructor(
    private readonly identity: IdentityClient,
    private readonly lockout: LockoutPolicy,
  ) {}

  /**
   * Checks the caller's password, taking a slot of the pair; a wrong one is 403 `forbidden` and keeps
   * its slot. The caller frees the pair (`release`) once everything else it checks was right too.
   */
  async check(caller: Caller, callerToken: string, password: string, purpose: string): Promise<PasswordProof> {
    if (!password) {
      throw validationFailed(
        [{ field: 'password', message: 'is required' }],
        `${purpose} needs your current password.`,
      );
    }
    const email = await this.identity.emailOf(callerToken);
    if (!email) throw wrongPassword();
    const source = { username: email.trim().toLowerCase(), clientIp: MFA_SETTINGS_SOURCE, deviceId: '' };
    const slotTakenAt = await this.lockout.takeSlot(source);
    const user = await this.identity.verifyPassword(email, password).catch(async (error: unknown) => {
      // Identity did not answer (503): the password was not checked, so the attempt is no failure.
      await this.lockout.notChecked(source, slotTakenAt);
      throw error;
    });
    if (!user || user.id !== caller.subject) throw wrongPassword();
    return { email, source, slotTakenAt };
  }

  /**
   * Frees the pair after a request that also proved a current code of the factor (a removal): both
   * kinds of failure the pair counts are answered by then.
   */
  async release(proof: PasswordProof): Promise<void> {
    await this.lockout.clear(proof.source);
  }

  /**
   * After a request that proved the password alone (enrolment, recovery codes, removing a pending
   * factor): gives its own slot back and keeps the count. Clearing the pair here let the password
   * reset the wrong codes a removal counted: four guesses, an enrolment (409, nothing changed), four
   * more, at the rate limit's pace instead of five per 15 minutes.
   */
  async passwordOnly(proof: PasswordProof): Promise<void> {
    await this.lockout.notChecked(proof.source, proof.slotTakenAt);
  }
}

const wrongPassword = () => new DomainError('forbidden', 'The current password is not correct.');
