import { EventConsumer, EventOf, STREAMS, USAGE_REPORTED, USER_CREATED, USER_DELETED } from '@acct/events';
import { USERS_QUOTA } from '@acct/limits';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';
import { QuotasRepository, setGauge, userCreated, userDeleted } from './quotas.repository';

/*
 * Usage from the bus: `platform.usage.reported` gauges from other platform services, one more
 * "Users" per `identity.user.created` and one fewer per `identity.user.deleted` (a disabled user
 * still counts: it exists and may be enabled again). Each event is applied once, by id, and each
 * user's creation and deletion once, by user; a malformed event is rejected (never redelivered) and
 * logged.
 */

/** `platform.usage.reported`: sets the org's gauge to the reported value, the latest report winning. */
@Injectable()
export class UsageReportedConsumer extends EventConsumer<typeof USAGE_REPORTED> {
  constructor(
    private readonly repository: QuotasRepository,
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
  ) {
    super({
      natsUrl: config.NATS_URL,
      name: 'platform-usage',
      stream: STREAMS.platformUsage,
      durable: 'platform-usage',
      types: [USAGE_REPORTED],
      logger: new Logger('usage-events'),
    });
  }

  protected async handleEvent(event: EventOf<typeof USAGE_REPORTED>): Promise<'ack'> {
    const { org_id, dimension, name, used } = event.data;
    // Org ids are UUIDs, which a publisher may write in capitals (RFC 9562 §4: case-insensitive); the
    // org's quotas are read under identity's lower-case id, so a report stored as written was never shown.
    await this.repository.applyOnce(
      event.id,
      event.type,
      setGauge(org_id.toLowerCase(), dimension, name, used, event.occurred_at),
    );
    return 'ack';
  }
}

type UserCountType = typeof USER_CREATED | typeof USER_DELETED;

/**
 * `identity.user.created` and `.deleted`: the org's Users, one more or one fewer; the other identity
 * events are not usage. Both come through this one durable consumer, but replicas pulling from it
 * (and redeliveries) can apply a user's deletion before its creation: the repository keeps which of
 * the two it applied per user, so the count is the same in either order (a user deleted before its
 * creation arrived is never counted).
 */
@Injectable()
export class UserCountConsumer extends EventConsumer<UserCountType> {
  constructor(
    private readonly repository: QuotasRepository,
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
  ) {
    super({
      natsUrl: config.NATS_URL,
      name: 'platform-users',
      stream: STREAMS.identity,
      // Replaces the durable `platform-users` (created only); event ids it applied are not applied again.
      durable: 'platform-user-count',
      filterSubject: 'identity.user.>',
      types: [USER_CREATED, USER_DELETED],
      logger: new Logger('usage-events'),
    });
  }

  protected async handleEvent(event: EventOf<UserCountType>): Promise<'ack'> {
    const { org_id, user_id } = event.data;
    const applied = event.type === USER_CREATED ? userCreated : userDeleted;
    await this.repository.applyOnce(
      event.id,
      event.type,
      applied(org_id, user_id, USERS_QUOTA.dimension, USERS_QUOTA.name, new Date(event.occurred_at)),
    );
    return 'ack';
  }
}
