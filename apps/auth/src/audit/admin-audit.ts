import { randomUUID } from 'node:crypto';

import { Caller, requireScope, USERS_READ_SCOPE } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { authV1 } from '@acct/contracts';
import { currentRequestId } from '@acct/observability';
import { escapeControlCharacters } from '@acct/problem';
import { Injectable, Logger } from '@nestjs/common';

import { IdentityClient, requireStillAdmin } from '../identity/identity.client';
import { AdminAuditDetails, AdminAuditRepository } from './admin-audit.repository';
import { decodeCursor, pageOf, pageSize } from './audit-cursor';

/**
 * The admin actions of contract §7 as the audit names them (docs/reference.md, "Audit"). Identity's
 * arrive as events (`user.*`); auth's own are recorded where they happen.
 */
export const ADMIN_ACTIONS = {
  userCreated: 'user.created',
  userUpdated: 'user.updated',
  userDisabled: 'user.disabled',
  userEnabled: 'user.enabled',
  userDeleted: 'user.deleted',
  passwordResetRequested: 'user.password_reset_requested',
  passwordResetIssued: 'user.password_reset_issued',
  sessionRevoked: 'session.revoked',
  sessionsRevoked: 'user.sessions_revoked',
  lockoutCleared: 'user.lockout_cleared',
  mfaRemoved: 'user.mfa_removed',
} as const;

/** One admin action: who (`actorId`) did what (`action`) to which target, in which org, when, under which request. */
export interface AdminAction {
  orgId: string;
  /** The user (or client) whose request it was; empty when not known. */
  actorId: string;
  action: string;
  targetType: 'user' | 'session';
  targetId: string;
  /** Default: the current request's `X-Request-Id`. */
  requestId?: string;
  /** Default: now. */
  at?: Date;
  /** What changed; never a secret. */
  details?: AdminAuditDetails;
  /** The identity event it came from: an event recorded twice is kept once. Default: a new id. */
  eventId?: string;
}

const safe = (value: string, max: number) => escapeControlCharacters(value).slice(0, max);

/**
 * The audit of admin actions (contract §7: who, what, target, when, request id), read by the org's
 * admins with `GET /v2/audit/events`. Auth's own actions (ending sessions, unlocking, removing MFA)
 * call `record` as they happen; identity's (creating, changing, disabling, enabling, deleting users)
 * arrive as outbox events (AdminAuditEventsConsumer): written asynchronously, within the relay's and
 * the consumer's delay, and durably.
 */
@Injectable()
export class AdminAudit {
  private readonly logger = new Logger('admin-audit');

  constructor(
    private readonly repository: AdminAuditRepository,
    private readonly identity: IdentityClient,
    private readonly clock: Clock,
  ) {}

  /**
   * Records an action that has happened. Never fails the action it describes: a failure to write is
   * logged as an error (the action is not undone for it).
   */
  async record(action: AdminAction): Promise<void> {
    try {
      await this.store(action);
    } catch (error) {
      this.logger.error(
        `could not record admin action ${action.action} on ${action.targetType} ${action.targetId}: ${(error as Error).message}`,
      );
    }
  }

  /** Records the action, or throws (the event consumer's path: the event is redelivered). */
  async store(action: AdminAction): Promise<void> {
    await this.repository.add({
      id: action.eventId ?? randomUUID(),
      at: action.at ?? this.clock.date(),
      orgId: safe(action.orgId, 64),
      actorId: safe(action.actorId, 200),
      action: safe(action.action, 80),
      targetType: action.targetType,
      targetId: safe(action.targetId, 200),
      requestId: safe(action.requestId ?? currentRequestId() ?? '', 128),
      details: action.details ?? null,
    });
  }

  /**
   * The caller's org's actions, newest first, one page; only for the org's admins, as identity says now
   * (a disabled, deleted or demoted admin's token works until its revocation arrives).
   */
  async list(
    caller: Caller,
    callerToken: string,
    limit: number,
    cursor: string,
  ): Promise<authV1.ListAdminAuditResponse> {
    requireScope(caller, USERS_READ_SCOPE);
    await requireStillAdmin(this.identity, caller, callerToken, "Only the org's admins may read the audit.");
    const size = pageSize(limit);
    const rows = await this.repository.listForOrg(caller.orgId, decodeCursor(cursor), size + 1);
    const { rows: page, next } = pageOf(rows, size);
    return {
      entries: page.map((row) => ({
        id: row.id,
        at: row.at.toISOString(),
        actorId: row.actorId,
        action: row.action,
        targetType: row.targetType,
        targetId: row.targetId,
        requestId: row.requestId,
        detailsJson: row.details ? JSON.stringify(row.details) : '',
      })),
      nextCursor: next,
    };
  }
}
