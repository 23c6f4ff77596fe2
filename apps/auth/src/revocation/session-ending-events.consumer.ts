import {
  EventConsumer,
  EventOf,
  SESSION_ENDING_EVENTS,
  SessionEndingEventType,
  STREAMS,
  USER_DELETED,
  USER_UPDATED,
} from '@acct/events';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { JsMsg } from 'nats';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { MfaRepository } from '../mfa/mfa.repository';
import { RefreshTokenService } from '../refresh/refresh-token.service';

/** The events this consumer reads: the session-ending ones, and a change that may take a role away. */
type HandledType = SessionEndingEventType | typeof USER_UPDATED;

/**
 * Whether an admin's change took a role from the user: the tokens issued before it still claim that
 * role (access tokens and refresh tokens carry the roles of the login), and roles are checked on them.
 */
const takesRoleAway = (data: { roles_before?: string[]; roles_after?: string[] }): boolean =>
  (data.roles_before ?? []).some((role) => !(data.roles_after ?? []).includes(role));

/**
 * Ends a user's sessions when identity says so (`identity.user.password_changed`, `.disabled`,
 * `.deleted`, and `.updated` when it takes a role away; docs/events.md): its refresh families created
 * before the change and every access token issued to it before then, everywhere within 1 s. A durable
 * consumer: an event that arrives while auth, Postgres or Redis is away is redelivered until it is
 * done. Redelivery changes nothing, and
 * only what is older than the change is revoked, so a replayed event never ends a later login.
 * A deleted user's second factor (its TOTP secret and recovery codes) is erased too: nothing can use
 * it any more, and a secret is kept no longer than it is needed.
 */
@Injectable()
export class SessionEndingEventsConsumer extends EventConsumer<HandledType> {
  constructor(
    private readonly refreshTokens: RefreshTokenService,
    private readonly mfa: MfaRepository,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    super({
      natsUrl: config.NATS_URL,
      name: 'auth-session-ending',
      stream: STREAMS.identity,
      durable: 'auth-session-ending',
      // One filter (NATS 2.9); the other identity.user events are acknowledged unread.
      filterSubject: 'identity.user.>',
      types: [...SESSION_ENDING_EVENTS, USER_UPDATED],
      logger: new Logger('session-ending-events'),
    });
  }

  protected async handleEvent(event: EventOf<HandledType>, message: JsMsg): Promise<'ack'> {
    if (event.type === USER_UPDATED && !takesRoleAway(event.data)) return 'ack';
    const { user_id, org_id } = event.data;
    const occurredAt = 'occurred_at' in event.data ? event.data.occurred_at : event.occurred_at;
    const families = await this.refreshTokens.revokeUser(org_id, user_id, Date.parse(occurredAt));
    const erased = event.type === USER_DELETED && (await this.mfa.removeFactor(user_id));
    this.logger.log(
      `${message.subject}: ended ${families} sessions of user ${user_id}${erased ? ', erased its second factor' : ''}`,
    );
    return 'ack';
  }
}
