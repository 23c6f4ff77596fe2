import { DurableConsumer, STREAMS, usageReported, USER_CREATED, userCreated } from '@acct/events';
import { USERS_QUOTA } from '@acct/limits';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { JsMsg } from 'nats';
import { z } from 'zod';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';
import { increment, QuotasRepository, setGauge } from './quotas.repository';

/**
 * Usage from the bus: `platform.usage.reported` gauges from other platform services, and one more
 * "Users" per `identity.user.created`. Each event is applied once, by id; a malformed one is
 * rejected (never redelivered) and logged.
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
        durable: 'platform-users',
        filterSubject: USER_CREATED,
        handle: (message) => this.onUserCreated(message),
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

  async onUserCreated(message: JsMsg) {
    const event = this.parse(userCreated, message);
    if (!event) return 'reject' as const;
    await this.repository.applyOnce(event.id, event.type, (tx) =>
      increment(tx, event.data.org_id, USERS_QUOTA.dimension, USERS_QUOTA.name, new Date(event.occurred_at)),
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
