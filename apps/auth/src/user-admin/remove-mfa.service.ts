import { Caller, namesCaller, requireScope, requireUser, USERS_READ_SCOPE } from '@acct/access-token';
import { DomainError, validationFailed } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { ADMIN_ACTIONS, AdminAudit } from '../audit/admin-audit';
import { CurrentPassword } from '../mfa/current-password';
import { MfaPolicy } from '../mfa/mfa.policy';
import { MfaRepository } from '../mfa/mfa.repository';
import { AdminTarget } from './admin-target';

/**
 * Removing a user's second factor (contract §7 `DELETE /v2/users/{id}/mfa`): its TOTP secret and
 * recovery codes go, and password logins no longer ask for a code.
 *
 * - The user itself (`me`, or its own id) proves the account twice: its current password (wrong: 403
 *   `forbidden`) and a current code of the factor, TOTP or an unused recovery code (wrong or reused:
 *   400 `invalid_mfa_code`); both kinds of failure keep their slot of the MFA settings lockout pair (5
 *   per 15 minutes), so a stolen access token is neither a password nor a code oracle. Without a
 *   confirmed factor there is no code to ask for: a pending enrolment is dropped after the password.
 * - An admin of the user's org (users:write) removes it without either (the user lost its
 *   authenticator). Another org's user is 404.
 *
 * Both are recorded in the admin audit (`user.mfa_removed`, details `by`: `admin` or `self`).
 *
 * Idempotent: removing MFA that is off answers the same success.
 */
@Injectable()
export class RemoveMfaService {
  constructor(
    private readonly target: AdminTarget,
    private readonly currentPassword: CurrentPassword,
    private readonly mfa: MfaPolicy,
    private readonly factors: MfaRepository,
    private readonly audit: AdminAudit,
  ) {}

  async remove(caller: Caller, callerToken: string, userId: string, password: string, mfaCode: string): Promise<void> {
    if (namesCaller(caller, userId)) {
      return this.removeOwn(caller, callerToken, password, mfaCode);
    }
    const user = await this.target.resolve(caller, callerToken, userId, "Only admins may remove another user's MFA.");
    await this.factors.removeFactor(user.id);
    await this.recorded(caller, user.id, 'admin');
  }

  private async removeOwn(caller: Caller, callerToken: string, password: string, mfaCode: string): Promise<void> {
    requireUser(caller);
    requireScope(caller, USERS_READ_SCOPE);
    const factor = await this.factors.find(caller.subject);
    if (factor?.confirmedAt && !mfaCode.trim()) throw codeRequired(!password);
    const proof = await this.currentPassword.check(caller, callerToken, password, 'Removing two-step verification');
    if (factor?.confirmedAt) {
      const check = await this.mfa.useCurrentCode(caller.subject, mfaCode);
      if (check !== 'accepted') throw wrongCode();
      await this.currentPassword.release(proof);
    } else {
      // The password alone: it must not reset the wrong codes the pair counts (CurrentPassword).
      await this.currentPassword.passwordOnly(proof);
    }
    if (factor?.confirmedAt) await this.factors.removeFactor(caller.subject);
    // Read as pending, so no code was asked for: a confirmation committed since (while the password
    // was checked) stays, as if it had come first; removing it needs a code.
    else if (!(await this.factors.removeUnconfirmedFactor(caller.subject))) throw codeRequired(false);
    await this.recorded(caller, caller.subject, 'self');
  }

  /** The admin audit's entry: who removed whose MFA, and whether as an admin or as the user itself. */
  private recorded(caller: Caller, userId: string, by: 'admin' | 'self'): Promise<void> {
    return this.audit.record({
      orgId: caller.orgId,
      actorId: caller.subject,
      action: ADMIN_ACTIONS.mfaRemoved,
      targetType: 'user',
      targetId: userId,
      details: { by },
    });
  }
}

/** The code (and the password, when `passwordToo`) is missing for a confirmed factor. */
function codeRequired(passwordToo: boolean) {
  // Both missing fields at once, before the password is checked (so no slot is spent on a typo).
  const errors = [{ field: 'mfa_code', message: 'is required' }];
  if (passwordToo) errors.unshift({ field: 'password', message: 'is required' });
  return validationFailed(errors, 'Removing two-step verification needs your password and a current code.');
}

const wrongCode = () =>
  new DomainError('invalid_mfa_code', 'The code is not valid, or was already used.', {
    errors: [{ field: 'mfa_code', message: 'must be a current code of the authenticator, or an unused recovery code' }],
  });
