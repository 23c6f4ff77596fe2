import { Caller } from '@acct/access-token';
import { Injectable } from '@nestjs/common';

import { AdminAudit } from '../audit/admin-audit';

/** The admin actions of contract §7 this service performs. */
export type AdminAction = 'user.lockout_cleared' | 'user.mfa_removed';

/**
 * THE call site of the admin audit (`GET /v2/audit/events`, contract §7) for auth's admin actions:
 * who (the caller), what, which user, when and the request id (the current request's), written by
 * AdminAudit (apps/auth/src/audit/), which never fails the action it records.
 */
@Injectable()
export class AdminActions {
  constructor(private readonly audit: AdminAudit) {}

  record(caller: Caller, action: AdminAction, targetUserId: string): Promise<void> {
    return this.audit.record({
      orgId: caller.orgId,
      actorId: caller.subject,
      action,
      targetType: 'user',
      targetId: targetUserId,
    });
  }
}
