import { Logger } from '@nestjs/common';
import { AckPolicy, connect, ConsumerMessages, DeliverPolicy, JsMsg, NatsConnection } from 'nats';

import { ensureStream } from './streams';

/** `retryInMs`: redelivered after that delay (a consumer's own back-off). */
export type Outcome = 'ack' | 'retry' | 'reject' | { retryInMs: number };

export interface DurableConsumerOptions {
  natsUrl: string;
  /** Connection name, for the server's monitoring. */
  name: string;
  stream: { name: string; subjects: readonly string[] };
  durable: string;
  filterSubject?: string;
  /**
   * `ack` when done, `retry` to have it redelivered in a second (or `{ retryInMs }` to choose when),
   * `reject` for a message that can never work.
   */
  handle: (message: JsMsg) => Promise<Outcome>;
  logger: Logger;
}

/**
 * A JetStream durable consumer with explicit acks that keeps going through broker outages: it
 * connects (and reconnects) forever, recreates its stream and consumer when missing, and processes
 * one message at a time. Stop it with `stop()`.
 */
export class DurableConsumer {
  private connection?: NatsConnection;
  private messages?: ConsumerMessages;
  private stopped = false;
  private loop?: Promise<void>;

  constructor(private readonly options: DurableConsumerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.messages?.stop();
    await this.connection?.drain().catch(() => undefined);
    // A loop still waiting for a broker that never came up is left to the process's exit.
    await Promise.race([this.loop, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    while (!this.stopped) {
      try {
        await this.consume();
      } catch (error) {
        if (!this.stopped) logger.warn(`consumer ${this.options.durable}: ${(error as Error).message}; retrying`);
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  private async consume(): Promise<void> {
    const { natsUrl, name, stream, durable, filterSubject, handle } = this.options;
    if (!this.connection || this.connection.isClosed()) {
      this.connection = await connect({
        servers: natsUrl,
        name,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        waitOnFirstConnect: true,
      });
      if (this.stopped) {
        await this.connection.close();
        return;
      }
    }
    const jsm = await this.connection.jetstreamManager({ timeout: 2000 });
    await ensureStream(jsm, stream);
    await jsm.consumers.add(stream.name, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: 30 * 1e9,
      ...(filterSubject ? { filter_subject: filterSubject } : {}),
    });
    const consumer = await this.connection.jetstream().consumers.get(stream.name, durable);
    this.messages = await consumer.consume({ max_messages: 50 });
    for await (const message of this.messages) {
      let outcome: Outcome;
      try {
        outcome = await handle(message);
      } catch (error) {
        this.options.logger.warn(`${durable}: message ${message.seq} failed: ${(error as Error).message}`);
        outcome = 'retry';
      }
      if (outcome === 'ack') message.ack();
      else if (outcome === 'reject') message.term();
      else message.nak(outcome === 'retry' ? 1000 : outcome.retryInMs);
    }
  }
}
