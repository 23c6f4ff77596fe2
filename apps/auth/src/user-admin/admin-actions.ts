import { Caller } from '@acct/access-token';
import { currentRequestId } from '@acct/observability';
import { Injectable, Logger } from '@nestjs/common';

/** The admin actions of contract §7 this service performs. */
export type AdminAction = 'user.lockout_cleared' | 'user.mfa_removed';

/**
 * THE call site of the admin audit (`GET /v2/audit/events`, contract §7) for auth's admin actions:
 * who (the caller), what, which user, when and the request id. Until the audit's recorder
 * (apps/auth/src/audit/) exists, the action is logged; wiring the recorder in is a change of this
 * method only.
 */
@Injectable()
export class AdminActions {
  private readonly logger = new Logger('AdminAudit');

  record(caller: Caller, action: AdminAction, targetUserId: string): Promise<void> {
    this.logger.log(
      `admin action ${action} on user ${targetUserId} by ${caller.kind} ${caller.subject} of org ${caller.orgId}` +
        ` (request ${currentRequestId() ?? 'unknown'})`,
    );
    return Promise.resolve();
  }
}
