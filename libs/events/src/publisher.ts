import { withTimeout } from '@acct/observability';
import { connect, JetStreamClient, NatsConnection } from 'nats';

import { drainConnection } from './drain';
import { ensureStream } from './streams';

export interface PublisherOptions {
  natsUrl: string;
  name: string;
  stream: { name: string; subjects: readonly string[] };
  /** How long one publish waits for the broker's ack (and for a connection). */
  timeoutMs?: number;
}

/** JetStream's answer to a publish no stream takes: no responders (503). */
const isNoStream = (error: unknown) => (error as { code?: string } | undefined)?.code === '503';

/**
 * Publishes to JetStream and waits for the ack; a message id makes a republish after a lost ack a
 * no-op. Connects lazily and reconnects forever; while the broker is away, `publish` fails after
 * `timeoutMs` instead of hanging.
 */
export class JetStreamPublisher {
  private connection?: Promise<NatsConnection>;
  private connected?: NatsConnection;
  private ready?: Promise<JetStreamClient>;
  private closed = false;

  constructor(private readonly options: PublisherOptions) {}

  async publish(subject: string, data: string, messageId: string): Promise<void> {
    const timeout = this.options.timeoutMs ?? 2000;
    const js = await withTimeout(this.jetstream(), timeout, 'not connected to NATS');
    try {
      await js.publish(subject, data, { msgID: messageId, timeout });
    } catch (error) {
      if (!isNoStream(error)) throw error;
      // No stream takes the subject: JetStream lost it (a server restarted with an empty store, an
      // operator's delete). The stream was ensured once, at connection: ensured again, the message is
      // published again; without this the publisher failed until some consumer happened to recreate it.
      this.ready = undefined;
      const again = await withTimeout(this.jetstream(), timeout, 'not connected to NATS');
      await again.publish(subject, data, { msgID: messageId, timeout });
    }
  }

  /**
   * Drains an open connection (closed without the drain when NATS hangs: drainConnection); a connection
   * still being attempted is closed as soon as it opens.
   */
  async close(): Promise<void> {
    this.closed = true;
    await drainConnection(this.connected);
  }

  private jetstream(): Promise<JetStreamClient> {
    this.connection ??= connect({
      servers: this.options.natsUrl,
      name: this.options.name,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
    }).then(async (connection) => {
      if (this.closed) {
        await connection.close();
        throw new Error('publisher closed');
      }
      this.connected = connection;
      return connection;
    });
    this.ready ??= this.connection
      .then(async (connection) => {
        await ensureStream(await connection.jetstreamManager({ timeout: 2000 }), this.options.stream);
        return connection.jetstream();
      })
      .catch((error: unknown) => {
        this.ready = undefined; // try the stream again next time
        throw error;
      });
    return this.ready;
  }
}
