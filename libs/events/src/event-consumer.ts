import { runInRequestContext } from '@acct/observability';
import { Inject, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { JsMsg } from 'nats';

import { DurableConsumer, DurableConsumerOptions, Outcome } from './durable-consumer';
import { EVENT_SCHEMAS, EventOf, EventType } from './envelope';

export interface EventConsumerOptions<Type extends EventType> extends Omit<DurableConsumerOptions, 'handle'> {
  /** The events it handles; any other message on its subjects is acknowledged unread. */
  types: readonly Type[];
}

/**
 * A durable consumer of some of the bus's events, as a Nest provider: it starts once the application
 * is up and stops as the application closes, together with the application's other consumers (see
 * `onModuleDestroy`). A message of one of its types is read against that type's schema
 * (EVENT_SCHEMAS) and handed to `handleEvent`; one that is not JSON or not a valid event is logged
 * (`logRejection`) and rejected (it could never work, so it is not redelivered).
 * An event is handled in the context of the request that raised it (its `request_id`), so every line
 * the handler logs, and its failure's, carries that request id as the request's other lines do.
 */
export abstract class EventConsumer<Type extends EventType> implements OnApplicationBootstrap, OnModuleDestroy {
  protected readonly logger: Logger;
  private readonly types: ReadonlySet<string>;
  private readonly consumer: DurableConsumer;
  /** The application's modules, where its other consumers are (absent when built without Nest). */
  @Inject(ModulesContainer) private readonly modules?: ModulesContainer;
  /** The stop under way or done, so each consumer is stopped once however many ask. */
  private stopped?: Promise<void>;

  protected constructor(options: EventConsumerOptions<Type>) {
    const { types, ...consumer } = options;
    this.logger = options.logger;
    this.types = new Set(types);
    this.consumer = new DurableConsumer({ ...consumer, handle: (message) => this.handle(message) });
  }

  onApplicationBootstrap() {
    this.consumer.start();
  }

  /**
   * Stops every consumer of the application at once, not only this one: Nest destroys one module
   * after the other, and each stop may wait up to its grace (15 s) for the message in hand, so two
   * consumers in two modules stopped in turn could outlast the process's 20 s shutdown grace, and the
   * second would meanwhile take new messages. The first consumer's module to go stops them all; the
   * others find their stop done or under way. Each consumer stops before its own module's providers
   * are destroyed, as before.
   */
  async onModuleDestroy() {
    await Promise.all(this.consumersOfApplication().map((consumer) => consumer.stopOnce()));
  }

  /**
   * Stops consuming: the message in hand is finished and acknowledged first (DurableConsumer.stop).
   * A subclass that holds more (a mail transport) overrides it, calling `super.stop()`.
   */
  protected async stop(): Promise<void> {
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
    const event = parsed.data as EventOf<Type>;
    const requestId = event.request_id;
    return requestId
      ? runInRequestContext({ requestId }, () => this.handleLogged(event, message))
      : this.handleLogged(event, message);
  }

  /** handleEvent, its failure logged (in the event's request context) and the event redelivered. */
  private async handleLogged(event: EventOf<Type>, message: JsMsg): Promise<Outcome> {
    try {
      return await this.handleEvent(event, message);
    } catch (error) {
      this.logger.warn(`${message.subject} #${message.seq} failed: ${(error as Error).message}; retrying`);
      return 'retry';
    }
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

  private stopOnce(): Promise<void> {
    return (this.stopped ??= this.stop());
  }

  /** This consumer and every other one the application holds, each once. */
  private consumersOfApplication(): Array<EventConsumer<EventType>> {
    const consumers = new Set<EventConsumer<EventType>>([this]);
    for (const module of this.modules?.values() ?? []) {
      for (const provider of module.providers.values()) {
        if (isEventConsumer(provider.instance)) consumers.add(provider.instance);
      }
    }
    return [...consumers];
  }

  private isHandled(type: string): type is Type {
    return this.types.has(type);
  }
}

const isEventConsumer = (value: unknown): value is EventConsumer<EventType> => value instanceof EventConsumer;
