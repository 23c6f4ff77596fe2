import {
  EventConsumer,
  EventOf,
  PASSWORD_RESET_ISSUED,
  PASSWORD_RESET_REQUESTED,
  STREAMS,
  USER_CREATED,
  USER_DELETED,
  USER_DISABLED,
  USER_ENABLED,
  USER_UPDATED,
} from '@acct/events';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { ADMIN_ACTIONS, AdminAudit } from './admin-audit';
import { AdminAuditDetails } from './admin-audit.repository';

/** Identity's events that are admin actions, and the action the audit records for each. */
const AUDITED = {
  [USER_CREATED]: ADMIN_ACTIONS.userCreated,
  [USER_UPDATED]: ADMIN_ACTIONS.userUpdated,
  [USER_DISABLED]: ADMIN_ACTIONS.userDisabled,
  [USER_ENABLED]: ADMIN_ACTIONS.userEnabled,
  [USER_DELETED]: ADMIN_ACTIONS.userDeleted,
  [PASSWORD_RESET_REQUESTED]: ADMIN_ACTIONS.passwordResetRequested,
  [PASSWORD_RESET_ISSUED]: ADMIN_ACTIONS.passwordResetIssued,
} as const;
type AuditedType = keyof typeof AUDITED;
const AUDITED_TYPES = Object.keys(AUDITED) as AuditedType[];

/**
 * Writes identity's admin actions (creating, changing, disabling, enabling, deleting a user, asking
 * for a password reset, mailed or handed to the caller) to the admin-action audit (docs/events.md). Identity writes each event in the
 * transaction of the change (outbox), so an action is audited exactly when it happened: after the
 * relay's and this consumer's delay (asynchronously), and durably (an event that arrives while auth
 * or Postgres is away is redelivered until it is recorded). The entry's id is the event's id: a
 * redelivered event is recorded once.
 */
@Injectable()
export class AdminAuditEventsConsumer extends EventConsumer<AuditedType> {
  constructor(
    private readonly audit: AdminAudit,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    super({
      natsUrl: config.NATS_URL,
      name: 'auth-admin-audit',
      stream: STREAMS.identity,
      durable: 'auth-admin-audit',
      // One filter (NATS 2.9); the other identity.user events are acknowledged unread.
      filterSubject: 'identity.user.>',
      types: AUDITED_TYPES,
      logger: new Logger('admin-audit-events'),
    });
  }

  protected async handleEvent(event: EventOf<AuditedType>): Promise<'ack'> {
    await this.audit.store({
      eventId: event.id,
      orgId: event.data.org_id,
      actorId: event.actor_id ?? '',
      action: AUDITED[event.type],
      targetType: 'user',
      targetId: event.data.user_id,
      requestId: event.request_id ?? '',
      at: new Date(event.occurred_at),
      details: 'changed' in event.data ? updateDetails(event.data) : undefined,
    });
    return 'ack';
  }
}

/** What an `identity.user.updated` says changed: field names, and the roles before and after. */
function updateDetails(data: {
  changed: string[];
  roles_before?: string[];
  roles_after?: string[];
}): AdminAuditDetails {
  return {
    changed: data.changed,
    ...(data.roles_before ? { roles_before: data.roles_before } : {}),
    ...(data.roles_after ? { roles_after: data.roles_after } : {}),
  };
}
