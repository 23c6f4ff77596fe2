import { JetStreamPublisher, STREAMS } from '@acct/events';
import { METRICS_REGISTRY } from '@acct/observability';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';
import { Transactions } from '../prisma/transactions';
import { OutboxRepository } from './outbox.repository';

const BATCH = 50;
const IDLE_MS = 200;
const MAX_BACKOFF_MS = 5000;

/**
 * Publishes outbox events to JetStream in order, with the event id as `Nats-Msg-Id`, and marks them
 * published only after the broker acknowledged them (in the same transaction that locked them). A
 * broker outage makes it retry with back-off; nothing is lost, and a republish after a lost ack is
 * dropped by JetStream's deduplication.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('outbox');
  private readonly publisher: JetStreamPublisher;
  private readonly published: Counter;
  private stopped = false;
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly transactions: Transactions,
    @Inject(IDENTITY_CONFIG) config: IdentityConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.publisher = new JetStreamPublisher({
      natsUrl: config.NATS_URL,
      name: 'identity-outbox',
      stream: STREAMS.identity,
    });
    this.published = new Counter({
      name: 'identity_outbox_published_total',
      help: 'Outbox events published to JetStream.',
      registers: [registry],
    });
    new Gauge({
      name: 'identity_outbox_backlog',
      help: 'Outbox events not yet published.',
      registers: [registry],
      collect: async function (this: Gauge) {
        this.set(await outbox.backlog().catch(() => -1));
      },
    });
  }

  onApplicationBootstrap() {
    this.loop = this.run();
  }

  async onModuleDestroy() {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.publisher.close();
  }

  /** Publishes sooner than the next poll (after a commit that wrote events). */
  nudge() {
    this.wake?.();
  }

  /**
   * Publishes while there is a full batch; otherwise waits IDLE_MS (or the back-off) or until nudged.
   * A nudge means events were just committed: it publishes at once. A wait that ran out first looks
   * whether anything is pending (one read), and only then opens the locking transaction: an idle
   * relay costs one read per IDLE_MS, not a transaction.
   */
  private async run() {
    let backoff = 0;
    // At start, after a nudge and after a full batch, publish without looking first.
    let publishNow = true;
    while (!this.stopped) {
      let sent = 0;
      try {
        if (publishNow || (await this.outbox.hasPending())) sent = await this.publishBatch();
        if (backoff > 0) this.logger.log('publishing again');
        backoff = 0;
      } catch (error) {
        if (backoff === 0) this.logger.warn(`cannot publish: ${(error as Error).message}; retrying with back-off`);
        backoff = Math.min(MAX_BACKOFF_MS, backoff ? backoff * 2 : 250);
      }
      publishNow = (sent >= BATCH && backoff === 0) || (await this.sleep(backoff || IDLE_MS));
    }
  }

  async publishBatch(): Promise<number> {
    return this.transactions.run(async (db) => {
      // One relay at a time across instances, so the stream keeps the outbox's order.
      await this.outbox.lockForPublishing(db);
      const rows = await this.outbox.lockBatch(db, BATCH);
      for (const row of rows) {
        await this.publisher.publish(row.type, JSON.stringify(row.payload), row.id);
      }
      if (rows.length > 0)
        await this.outbox.markPublished(
          db,
          rows.map((row) => row.id),
          new Date(),
        );
      this.published.inc(rows.length);
      return rows.length;
    });
  }

  /** Waits `ms`; true when a nudge (or the stop) ended the wait early. */
  private sleep(ms: number) {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
}
