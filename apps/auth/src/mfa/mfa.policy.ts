import { Clock } from '@acct/clock';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { MfaRepository } from './mfa.repository';
import { RecoveryCodeRepository } from './recovery-code.repository';
import { normalisedRecoveryCode, recoveryCodeHash } from './recovery-codes';
import { matchingStep } from './totp';
import { TotpSecrets } from './totp-secrets';

/** What became of a code: accepted (and now spent), wrong, or right but already used. */
export type CodeCheck = 'accepted' | 'invalid' | 'reused';

/**
 * Contract §4 MFA at login: after a correct password, an account with a confirmed TOTP factor needs
 * `mfa_code`: the current TOTP code or one of its unused recovery codes (contract §7). Missing → 403
 * `mfa_required`; wrong, outside ±1 step, or already used → 400 `invalid_grant`. Each accepted TOTP
 * code's time step, and each accepted recovery code, is consumed with one conditional UPDATE, so a
 * code works once, also when two logins submit it at the same moment. A refusal here keeps the
 * lockout slots the attempt took (see login/password-login.ts).
 */
@Injectable()
export class MfaPolicy {
  constructor(
    private readonly repository: MfaRepository,
    private readonly recoveryCodes: RecoveryCodeRepository,
    private readonly secrets: TotpSecrets,
    private readonly clock: Clock,
  ) {}

  /**
   * After a correct password: passes an account without MFA, else needs a fresh, right `mfaCode`.
   * `beforeSpending` runs just before a code is checked (and, when right, spent): what refuses the
   * login whatever the code (the scope asked for) refuses it there, so the code stays usable.
   */
  async verifyCode(userId: string, mfaCode: string, beforeSpending?: () => void): Promise<void> {
    const factor = await this.repository.find(userId);
    if (!factor?.confirmedAt) return;
    const code = mfaCode.trim();
    if (!code) throw mfaRequired();
    beforeSpending?.();
    const check = await this.useCode(userId, factor.encryptedSecret, code);
    if (check === 'invalid') throw badCode('mfa_code_invalid');
    if (check === 'reused') throw badCode('mfa_code_reused');
  }

  /**
   * Checks `code` against the user's confirmed factor, spending it when right: six digits are a TOTP
   * code, anything else a recovery code. `invalid` when the user has no confirmed factor.
   */
  async useCurrentCode(userId: string, code: string): Promise<CodeCheck> {
    const factor = await this.repository.find(userId);
    if (!factor?.confirmedAt) return 'invalid';
    return this.useCode(userId, factor.encryptedSecret, code.trim());
  }

  private async useCode(userId: string, encryptedSecret: string, code: string): Promise<CodeCheck> {
    const recoveryCode = normalisedRecoveryCode(code);
    if (recoveryCode !== undefined) {
      // Looked up by the hash of an 80-bit random code: the lookup's timing tells nothing useful.
      const used = await this.recoveryCodes.use(userId, recoveryCodeHash(recoveryCode), this.clock.date());
      return used ? 'accepted' : 'invalid';
    }
    const step = matchingStep(this.secrets.open(encryptedSecret, userId), code, this.clock.now());
    if (step === undefined) return 'invalid';
    return (await this.repository.consumeStep(userId, step)) ? 'accepted' : 'reused';
  }
}

function mfaRequired(): DomainError {
  const description =
    'This account uses two-step verification: send mfa_code with the 6-digit code or a recovery code.';
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
