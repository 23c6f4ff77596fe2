import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { withAuditReason } from '../audit/audit-reason';
import { LoggedInUser, LoginAttempt, LoginPolicy } from '../tokens/login-policy';
import { MfaRepository } from './mfa.repository';
import { matchingStep } from './totp';
import { TotpSecrets } from './totp-secrets';

/**
 * Contract §4 MFA at login: after a correct password, an account with a confirmed TOTP factor needs
 * `mfa_code`. Missing → 403 `mfa_required`; wrong, outside ±1 step, or already used → 400
 * `invalid_grant`. Each accepted code's time step is consumed with one conditional UPDATE, so a code
 * works once, also when two logins submit it at the same moment.
 *
 * Registered before the lockout policies: when it refuses, their `afterSuccess` never runs, so the
 * attempt keeps the lockout slots it took before the password check (a wrong or missing code counts
 * as a failure and never resets a count).
 */
@Injectable()
export class MfaPolicy implements LoginPolicy {
  constructor(
    private readonly repository: MfaRepository,
    private readonly secrets: TotpSecrets,
    private readonly clock: Clock,
  ) {}

  async beforePasswordCheck(): Promise<void> {}

  async afterFailure(): Promise<void> {}

  async afterSuccess(attempt: LoginAttempt, user: LoggedInUser): Promise<void> {
    const factor = await this.repository.find(user.id);
    if (!factor?.confirmedAt) return;
    const code = attempt.mfaCode.trim();
    if (!code) throw mfaRequired();
    const step = matchingStep(this.secrets.open(factor.encryptedSecret, user.id), code, this.clock.now());
    if (step === undefined) throw badCode('mfa_code_invalid');
    if (!(await this.repository.consumeStep(user.id, step))) throw badCode('mfa_code_reused');
  }
}

function mfaRequired(): DomainError {
  const description = 'This account uses two-step verification: send mfa_code with the 6-digit code.';
  return new DomainError('mfa_required', description, {
    extensions: { error: 'mfa_required', error_description: description },
  });
}

function badCode(reason: string): DomainError {
  const description = 'The MFA code is invalid or has already been used.';
  return withAuditReason(
    new DomainError('invalid_grant', description, {
      extensions: { error: 'invalid_grant', error_description: description },
    }),
    reason,
  );
}
