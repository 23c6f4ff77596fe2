import { Caller } from '@acct/access-token';
import { Injectable } from '@nestjs/common';

import { ADMIN_ACTIONS, AdminAudit } from '../audit/admin-audit';
import { LockoutReset } from '../lockout/lockout-reset';
import { AdminTarget } from './admin-target';

/**
 * An admin's unlock (contract §7 `DELETE /v2/users/{id}/lockout`): the user's (username, IP) lockouts
 * and its account-wide ceiling are forgotten, under every name its logins may be counted under: its
 * e-mail and phone as typed keys, and the canonical `user:<id>` / `email:` / `phone:` keys identity's
 * ResolveLoginKey gives. Idempotent: a user with no lock is "unlocked" too. Recorded in the admin audit.
 */
@Injectable()
export class UnlockUserService {
  constructor(
    private readonly target: AdminTarget,
    private readonly reset: LockoutReset,
    private readonly audit: AdminAudit,
  ) {}

  async unlock(caller: Caller, callerToken: string, userId: string): Promise<void> {
    const user = await this.target.resolve(caller, callerToken, userId, 'Only admins may unlock a user.');
    await this.reset.clear(loginKeysOf(user));
    await this.audit.record({
      orgId: caller.orgId,
      actorId: caller.subject,
      action: ADMIN_ACTIONS.lockoutCleared,
      targetType: 'user',
      targetId: user.id,
    });
  }
}

/** Every key a login of the user may have been counted under. */
export function loginKeysOf(user: { id: string; email: string; phone?: string }): string[] {
  const email = user.email.trim().toLowerCase();
  const keys = [`user:${user.id}`, email, `email:${email}`];
  if (user.phone) keys.push(user.phone, `phone:${user.phone}`);
  return keys;
}
