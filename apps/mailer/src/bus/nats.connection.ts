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

  constructor(@Inject(MAILER_CONFIG) private readonly config: MailerConfig) {}

  get(): Promise<NatsConnection> {
    this.connection ??= connect({
      servers: this.config.NATS_URL,
      name: 'mailer',
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
    }).then((connection) => {
      this.logger.log('connected');
      return connection;
    });
    return this.connection;
  }

  async check() {
    const connection = await withTimeout(this.get(), 1000, 'not connected');
    await connection.rtt();
  }

  async onModuleDestroy() {
    if (this.connection) await (await this.connection).drain();
  }
}
