import {
  DurableConsumer,
  STREAMS,
  usageReported,
  USER_CREATED,
  USER_DELETED,
  userCreated,
  userDeleted,
} from '@acct/events';
import { USERS_QUOTA } from '@acct/limits';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { JsMsg } from 'nats';
import { z } from 'zod';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';
import { decrement, increment, QuotasRepository, setGauge } from './quotas.repository';

/**
 * Usage from the bus: `platform.usage.reported` gauges from other platform services, one more
 * "Users" per `identity.user.created` and one fewer per `identity.user.deleted` (a disabled user
 * still counts: it exists and may be enabled again). Each event is applied once, by id; a malformed
 * one is rejected (never redelivered) and logged. Created and deleted come through one consumer, in
 * stream order, so a user's deletion is never counted before its creation.
 */
@Injectable()
export class UsageEventsConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('usage-events');
  private readonly consumers: DurableConsumer[];

  constructor(
    private readonly repository: QuotasRepository,
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
  ) {
    this.consumers = [
      new DurableConsumer({
        natsUrl: config.NATS_URL,
        name: 'platform-usage',
        stream: STREAMS.platformUsage,
        durable: 'platform-usage',
        handle: (message) => this.onUsageReported(message),
        logger: this.logger,
      }),
      new DurableConsumer({
        natsUrl: config.NATS_URL,
        name: 'platform-users',
        stream: STREAMS.identity,
        // Replaces the durable `platform-users` (created only); event ids it applied are not applied again.
        durable: 'platform-user-count',
        filterSubject: 'identity.user.>',
        handle: (message) => this.onUserEvent(message),
        logger: this.logger,
      }),
    ];
  }

  onApplicationBootstrap() {
    for (const consumer of this.consumers) consumer.start();
  }

  async onModuleDestroy() {
    await Promise.all(this.consumers.map((consumer) => consumer.stop()));
  }

  async onUsageReported(message: JsMsg) {
    const event = this.parse(usageReported, message);
    if (!event) return 'reject' as const;
    const { org_id, dimension, name, used } = event.data;
    await this.repository.applyOnce(event.id, event.type, (tx) =>
      setGauge(tx, org_id, dimension, name, used, new Date(event.occurred_at)),
    );
    return 'ack' as const;
  }

  /** `identity.user.created` and `.deleted` count; the other identity events are not usage. */
  async onUserEvent(message: JsMsg) {
    if (message.subject === USER_CREATED) return this.onUserCreated(message);
    if (message.subject === USER_DELETED) return this.onUserDeleted(message);
    return 'ack' as const;
  }

  async onUserCreated(message: JsMsg) {
    const event = this.parse(userCreated, message);
    if (!event) return 'reject' as const;
    await this.repository.applyOnce(event.id, event.type, (tx) =>
      increment(tx, event.data.org_id, USERS_QUOTA.dimension, USERS_QUOTA.name, new Date(event.occurred_at)),
    );
    return 'ack' as const;
  }

  async onUserDeleted(message: JsMsg) {
    const event = this.parse(userDeleted, message);
    if (!event) return 'reject' as const;
    await this.repository.applyOnce(event.id, event.type, (tx) =>
      decrement(tx, event.data.org_id, USERS_QUOTA.dimension, USERS_QUOTA.name, new Date(event.occurred_at)),
    );
    return 'ack' as const;
  }

  private parse<Schema extends z.ZodType>(schema: Schema, message: JsMsg): z.output<Schema> | undefined {
    let json: unknown;
    try {
      json = JSON.parse(message.string());
    } catch {
      this.logger.warn(`rejected ${message.subject} #${message.seq}: not JSON`);
      return undefined;
    }
    const result = schema.safeParse(json);
    if (!result.success) {
      const issues = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      this.logger.warn(`rejected ${message.subject} #${message.seq}: ${issues}`);
      return undefined;
    }
    return result.data;
  }
}
