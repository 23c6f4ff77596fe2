import { Caller, requireScope, requireUser, USERS_READ_SCOPE } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { authV1 } from '@acct/contracts';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { CurrentPassword } from './current-password';
import { RecoveryCodeRepository } from './recovery-code.repository';
import { newRecoveryCode, normalisedRecoveryCode, RECOVERY_CODE_COUNT, recoveryCodeHash } from './recovery-codes';

/**
 * Recovery codes (contract §7, `POST /v2/users/me/mfa/recovery-codes`) for the calling user: 10 new
 * single-use codes, each accepted once as `mfa_code` where a TOTP code is (MfaPolicy). Needs the current
 * password and a confirmed factor; a new set replaces the old one, whose unused codes stop working.
 * The codes are answered once; only their hashes are kept.
 */
@Injectable()
export class RecoveryCodesService {
  constructor(
    private readonly repository: RecoveryCodeRepository,
    private readonly currentPassword: CurrentPassword,
    private readonly clock: Clock,
  ) {}

  async create(caller: Caller, callerToken: string, password: string): Promise<authV1.CreateRecoveryCodesResponse> {
    requireUser(caller, 'Only users have recovery codes.');
    requireScope(caller, USERS_READ_SCOPE);
    const proof = await this.currentPassword.check(caller, callerToken, password, 'Creating recovery codes');
    await this.currentPassword.passwordOnly(proof);
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const hashes = codes.map((code) => recoveryCodeHash(normalisedRecoveryCode(code) ?? code));
    const createdAt = this.clock.date();
    if (!(await this.repository.replaceSet(caller.subject, hashes, createdAt))) {
      throw new DomainError('mfa_not_enrolled', 'Turn on two-step verification before creating recovery codes.');
    }
    return { codes, createdAt: createdAt.toISOString() };
  }
}
