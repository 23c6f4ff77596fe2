import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { JsMsg } from 'nats';

import { DurableConsumer, DurableConsumerOptions, Outcome } from './durable-consumer';
import { EVENT_SCHEMAS, EventOf, EventType } from './envelope';

export interface EventConsumerOptions<Type extends EventType> extends Omit<DurableConsumerOptions, 'handle'> {
  /** The events it handles; any other message on its subjects is acknowledged unread. */
  types: readonly Type[];
}

/**
 * A durable consumer of some of the bus's events, as a Nest provider: it starts once the application
 * is up and stops with its module. A message of one of its types is read against that type's schema
 * (EVENT_SCHEMAS) and handed to `handleEvent`; one that is not JSON or not a valid event is logged
 * (`logRejection`) and rejected (it could never work, so it is not redelivered).
 */
export abstract class EventConsumer<Type extends EventType> implements OnApplicationBootstrap, OnModuleDestroy {
  protected readonly logger: Logger;
  private readonly types: ReadonlySet<string>;
  private readonly consumer: DurableConsumer;

  protected constructor(options: EventConsumerOptions<Type>) {
    const { types, ...consumer } = options;
    this.logger = options.logger;
    this.types = new Set(types);
    this.consumer = new DurableConsumer({ ...consumer, handle: (message) => this.handle(message) });
  }

  onApplicationBootstrap() {
    this.consumer.start();
  }

  async onModuleDestroy() {
    await this.consumer.stop();
  }

  async handle(message: JsMsg): Promise<Outcome> {
    const type = message.subject;
    if (!this.isHandled(type)) return 'ack';
    let json: unknown;
    try {
      json = JSON.parse(message.string());
    } catch {
      json = undefined;
    }
    const parsed = EVENT_SCHEMAS[type].safeParse(json);
    if (!parsed.success) {
      this.logRejection(message, json, parsed.error.message);
      return 'reject';
    }
    return this.handleEvent(parsed.data as EventOf<Type>, message);
  }

  /** One valid event of its types: `ack` when done, `retry` (or throw) to have it redelivered. */
  protected abstract handleEvent(event: EventOf<Type>, message: JsMsg): Promise<Outcome>;

  /**
   * Logs a message it rejects. `_json` is its body as read (undefined when not JSON), for a subclass
   * that labels the line with what the envelope still gives.
   */
  protected logRejection(message: JsMsg, _json: unknown, reason: string): void {
    this.logger.warn(`rejected ${message.subject} #${message.seq}: ${reason}`);
  }

  private isHandled(type: string): type is Type {
    return this.types.has(type);
  }
}
