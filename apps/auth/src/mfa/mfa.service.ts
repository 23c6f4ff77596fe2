import { Caller, requireScope, requireUser, USERS_READ_SCOPE } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { authV1 } from '@acct/contracts';
import { DomainError } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { CurrentPassword } from './current-password';
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
    private readonly currentPassword: CurrentPassword,
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /**
   * A new secret and its otpauth URI. Replaces a pending (unconfirmed) secret; once MFA is enabled,
   * 409 `mfa_already_enabled` (remove it first: `DELETE /v2/users/me/mfa`).
   */
  async enroll(caller: Caller, callerToken: string, password: string): Promise<authV1.EnrollTotpResponse> {
    requireMfaCaller(caller);
    // Enrolment binds a second factor to the account: a stolen access token must not bind the thief's.
    const proof = await this.currentPassword.check(caller, callerToken, password, 'Enrolling a second factor');
    await this.currentPassword.passwordOnly(proof);
    const secret = newTotpSecret();
    const saved = await this.repository.savePending(
      caller.subject,
      this.secrets.seal(secret, caller.subject),
      new Date(this.clock.now()),
    );
    if (!saved) throw alreadyEnabled();
    return { secret, otpauthUri: totpUri(secret, this.config.MFA_TOTP_ISSUER, proof.email) };
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

const alreadyEnabled = () =>
  new DomainError('mfa_already_enabled', 'Two-step verification is already enabled for this account.');

const wrongCode = () =>
  new DomainError('invalid_mfa_code', 'The code is not valid for the enrolled secret.', {
    errors: [{ field: 'code', message: 'must be the current 6-digit code of the authenticator' }],
  });
