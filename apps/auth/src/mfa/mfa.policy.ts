import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { MfaRepository } from './mfa.repository';
import { matchingStep } from './totp';
import { TotpSecrets } from './totp-secrets';

/**
 * Contract §4 MFA at login: after a correct password, an account with a confirmed TOTP factor needs
 * `mfa_code`. Missing → 403 `mfa_required`; wrong, outside ±1 step, or already used → 400
 * `invalid_grant`. Each accepted code's time step is consumed with one conditional UPDATE, so a code
 * works once, also when two logins submit it at the same moment. A refusal here keeps the lockout slots the attempt took (see login/password-login.ts).
 */
@Injectable()
export class MfaPolicy {
  constructor(
    private readonly repository: MfaRepository,
    private readonly secrets: TotpSecrets,
    private readonly clock: Clock,
  ) {}

  /** After a correct password: passes an account without MFA, else needs a fresh, right `mfaCode`. */
  async verifyCode(userId: string, mfaCode: string): Promise<void> {
    const factor = await this.repository.find(userId);
    if (!factor?.confirmedAt) return;
    const code = mfaCode.trim();
    if (!code) throw mfaRequired();
    const step = matchingStep(this.secrets.open(factor.encryptedSecret, userId), code, this.clock.now());
    if (step === undefined) throw badCode('mfa_code_invalid');
    if (!(await this.repository.consumeStep(userId, step))) throw badCode('mfa_code_reused');
  }
}

function mfaRequired(): DomainError {
  const description = 'This account uses two-step verification: send mfa_code with the 6-digit code.';
  return new DomainError('mfa_required', description, {
    extensions: { error: 'mfa_required', error_description: description },
  });
}

function badCode(auditReason: string): DomainError {
  const description = 'The MFA code is invalid or has already been used.';
  return new DomainError('invalid_grant', description, {
    extensions: { error: 'invalid_grant', error_description: description },
    auditReason,
  });
}
