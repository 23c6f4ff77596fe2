import { Logger } from '@nestjs/common';
import { AckPolicy, connect, DeliverPolicy, JsMsg, NatsConnection } from 'nats';

import { drainConnection } from './drain';
import { ensureStream } from './streams';

/** How long JetStream waits for a message's ack before redelivering it (pushed back while it is handled). */
const ACK_WAIT_MS = 30_000;
/** How long one pull for the next message waits before asking again. */
const NEXT_EXPIRES_MS = 5_000;
/**
 * How long a stop waits for the message in hand to be handled and acknowledged before it closes the
 * connection: within the processes' 20 s shutdown grace, and longer than an SMTP send usually takes.
 */
const STOP_GRACE_MS = 15_000;

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
  /** How long a stop waits for the message in hand (STOP_GRACE_MS unless given; specs shorten it). */
  stopGraceMs?: number;
}

/**
 * A JetStream durable consumer with explicit acks that keeps going through broker outages: it
 * connects (and reconnects) forever, recreates its stream and consumer when missing, and fetches and
 * processes one message at a time. Stop it with `stop()`.
 */
export class DurableConsumer {
  private connection?: NatsConnection;
  private stopped = false;
  private loop?: Promise<void>;
  /** The message being handled now, until it is acknowledged (or given back). */
  private inFlight?: Promise<void>;

  constructor(private readonly options: DurableConsumerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // The message in hand is finished and acknowledged on the open connection first: cut off, it would
    // be redelivered and handled again (a mail the SMTP server had already taken sent twice).
    if (this.inFlight) {
      await Promise.race([
        this.inFlight.catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, this.options.stopGraceMs ?? STOP_GRACE_MS).unref()),
      ]);
    }
    await drainConnection(this.connection);
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
    const { natsUrl, name, stream, durable, filterSubject } = this.options;
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
      ack_wait: ACK_WAIT_MS * 1e6,
      // No limit on messages given back for a later retry: JetStream counts a message `nak`ed with a
      // delay (a consumer's own back-off) as pending, and at its default of 1,000 pending delivered
      // nothing else. A thousand invitations to a domain that defers mail (SMTP 4yz, retried for a
      // day) held up every other org's mail behind them. What is handled at once stays bounded by the
      // consumer itself: one message at a time per instance.
      max_ack_pending: -1,
      ...(filterSubject ? { filter_subject: filterSubject } : {}),
    });
    const consumer = await this.connection.jetstream().consumers.get(stream.name, durable);
    // One message at a time, asked for only once the last one is done: a message waiting in a
    // client-side batch would run out its ack wait there and be handled by another instance as well.
    while (!this.stopped) {
      const message = await consumer.next({ expires: NEXT_EXPIRES_MS });
      if (!message) continue;
      // Fetched as the stop began: given back for another instance (or the next start); if the
      // connection drains already, it returns after the ack wait instead.
      if (this.stopped) {
        try {
          message.nak();
        } catch {
          // The connection drains already: no give-back is sent.
        }
        break;
      }
      this.inFlight = this.process(message);
      try {
        await this.inFlight;
      } finally {
        this.inFlight = undefined;
      }
    }
  }

  private async process(message: JsMsg): Promise<void> {
    const { durable, handle } = this.options;
    let outcome: Outcome;
    // While it is being handled, the message's ack deadline is pushed back: a handler slower than
    // ACK_WAIT_MS must not have it redelivered to another instance and handled there at the same time.
    const keepAlive = setInterval(() => message.working(), ACK_WAIT_MS / 3);
    try {
      outcome = await handle(message);
    } catch (error) {
      this.options.logger.warn(`${durable}: message ${message.seq} failed: ${(error as Error).message}`);
      outcome = 'retry';
    } finally {
      clearInterval(keepAlive);
    }
    if (outcome === 'ack') message.ack();
    else if (outcome === 'reject') message.term();
    else message.nak(outcome === 'retry' ? 1000 : outcome.retryInMs);
  }
}
