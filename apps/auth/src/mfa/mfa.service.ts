import { Caller, requireScope, requireUser, USERS_READ_SCOPE } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { authV1 } from '@acct/contracts';
import { DomainError, validationFailed } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { IdentityClient } from '../identity/identity.client';
import { LockoutPolicy } from '../lockout/lockout.policy';
import { MfaRepository } from './mfa.repository';
import { matchingStep, newTotpSecret, totpUri } from './totp';
import { TotpSecrets } from './totp-secrets';

/**
 * TOTP enrolment and confirmation (contract §4) for the calling user: the user is the subject of the
 * caller's access token, never a request field; clients (client_credentials tokens) have no MFA.
 */
@Injectable()
export class MfaService {
  constructor(
    private readonly repository: MfaRepository,
    private readonly secrets: TotpSecrets,
    private readonly identity: IdentityClient,
    private readonly clock: Clock,
    private readonly lockout: LockoutPolicy,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /**
   * A new secret and its otpauth URI. Replaces a pending (unconfirmed) secret; once MFA is enabled,
   * 409 `mfa_already_enabled` (turning it off or replacing it is not offered yet).
   */
  async enroll(caller: Caller, callerToken: string, password: string): Promise<authV1.EnrollTotpResponse> {
    requireMfaCaller(caller);
    const account = await this.requireCurrentPassword(caller, callerToken, password);
    const secret = newTotpSecret();
    const saved = await this.repository.savePending(
      caller.subject,
      this.secrets.seal(secret, caller.subject),
      new Date(this.clock.now()),
    );
    if (!saved) throw alreadyEnabled();
    return { secret, otpauthUri: totpUri(secret, this.config.MFA_TOTP_ISSUER, account) };
  }

  /**
   * Enrolment binds a second factor to the account, so an access token alone is not enough (a stolen
   * one could bind the thief's authenticator): the caller proves the current password. Wrong
   * passwords count in the (username, `mfa-enrolment`) lockout pair, 5 per 15 minutes, so the
   * endpoint is no password oracle for a token holder. Answers the account's e-mail.
   */
  private async requireCurrentPassword(caller: Caller, callerToken: string, password: string): Promise<string> {
    if (!password) {
      throw validationFailed(
        [{ field: 'password', message: 'is required' }],
        'Enrolling a second factor needs your current password.',
      );
    }
    const email = await this.identity.emailOf(callerToken);
    if (!email) throw wrongPassword();
    const source = { username: email.trim().toLowerCase(), clientIp: ENROLMENT_SOURCE, deviceId: '' };
    await this.lockout.takeSlot(source);
    const user = await this.identity.verifyPassword(email, password);
    if (!user || user.id !== caller.subject) throw wrongPassword();
    await this.lockout.clear(source);
    return email;
  }

  /** A correct code for the pending secret enables MFA; its time step then counts as used. */
  async confirm(caller: Caller, code: string): Promise<authV1.ConfirmTotpResponse> {
    requireMfaCaller(caller);
    const stored = await this.repository.find(caller.subject);
    if (!stored) {
      throw new DomainError('mfa_not_enrolled', 'There is no TOTP secret to confirm; enrol first.');
    }
    if (stored.confirmedAt) throw alreadyEnabled();
    const now = this.clock.now();
    const step = matchingStep(this.secrets.open(stored.encryptedSecret, caller.subject), code.trim(), now);
    if (step === undefined) {
      throw wrongCode();
    }
    const confirmedAt = new Date(now);
    if (!(await this.repository.confirm(caller.subject, stored.encryptedSecret, step, confirmedAt))) {
      // A concurrent request confirmed the secret, or replaced it (then the code is for the old one).
      if ((await this.repository.find(caller.subject))?.confirmedAt) throw alreadyEnabled();
      throw wrongCode();
    }
    return { enabled: true, confirmedAt: confirmedAt.toISOString() };
  }
}

/**
 * A user (clients have no second factor) with the scope `/v2/users/me` needs: every role holds
 * `users:read`, so every user can protect their own account.
 */
function requireMfaCaller(caller: Caller): void {
  requireUser(caller, 'Only users can enrol a second factor.');
  requireScope(caller, USERS_READ_SCOPE);
}

/** The lockout pair's "address" for enrolment attempts: no client IP reaches this call. */
const ENROLMENT_SOURCE = 'mfa-enrolment';

const wrongPassword = () => new DomainError('forbidden', 'The current password is not correct.');

const alreadyEnabled = () =>
  new DomainError('mfa_already_enabled', 'Two-step verification is already enabled for this account.');

const wrongCode = () =>
  new DomainError('invalid_mfa_code', 'The code is not valid for the enrolled secret.', {
    errors: [{ field: 'code', message: 'must be the current 6-digit code of the authenticator' }],
  });
