import { drainConnection } from '@acct/events';
import { ReadinessCheck, withTimeout } from '@acct/observability';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { connect, NatsConnection } from 'nats';

import { MAILER_CONFIG, MailerConfig } from '../config';

/** The mailer's NATS connection: reconnects forever; the mailer is ready only while it is connected. */
@Injectable()
export class NatsConnectionProvider implements ReadinessCheck, OnModuleDestroy {
  readonly name = 'message_bus';
  private readonly logger = new Logger('nats');
  private connection?: Promise<NatsConnection>;
  private connected?: NatsConnection;
  private closed = false;

  constructor(@Inject(MAILER_CONFIG) private readonly config: MailerConfig) {}

  get(): Promise<NatsConnection> {
    this.connection ??= connect({
      servers: this.config.NATS_URL,
      name: 'mailer',
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
    }).then(async (connection) => {
      if (this.closed) {
        await connection.close();
        throw new Error('mailer stopped');
      }
      this.connected = connection;
      this.logger.log('connected');
      return connection;
    });
    return this.connection;
  }

  /**
   * Connected, and NATS answers a round trip within a second. A NATS that hangs (its socket open,
   * nothing answering) never answers the PING: the client's own pings notice only minutes later, and
   * until then the probe would wait with it instead of answering 503 (runbook, "Dependency outages").
   */
  async check() {
    const connection = await withTimeout(this.get(), 1000, 'not connected');
    await withTimeout(connection.rtt(), 1000, 'NATS does not answer');
  }

  /**
   * Drains an open connection. One still being attempted (NATS away since the start) is not waited
   * for, which would hold the shutdown until NATS came back: it is closed as soon as it opens. A NATS
   * that hangs is not waited for either (drainConnection).
   */
  async onModuleDestroy() {
    this.closed = true;
    await drainConnection(this.connected);
  }
}
