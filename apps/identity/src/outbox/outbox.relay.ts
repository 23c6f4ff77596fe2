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
 * How long a batch's transaction starts new publishes for: well inside its 10 s timeout
 * (Transactions), with room for one more publish (2 s at most) and the marking. Each publish waits a
 * round trip for the broker's ack, so a full batch to a broker 200 ms away (another region, a stream
 * waiting for its replicas) took longer than its transaction may live: rolled back, the same batch
 * was published again and again, and nothing after it ever was.
 */
const PUBLISH_BUDGET_MS = 5000;

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
      let more = false;
      try {
        if (publishNow || (await this.outbox.hasPending())) more = (await this.publishSome()).more;
        if (backoff > 0) this.logger.log('publishing again');
        backoff = 0;
      } catch (error) {
        if (backoff === 0) this.logger.warn(`cannot publish: ${(error as Error).message}; retrying with back-off`);
        backoff = Math.min(MAX_BACKOFF_MS, backoff ? backoff * 2 : 250);
      }
      publishNow = (more && backoff === 0) || (await this.sleep(backoff || IDLE_MS));
    }
  }

  /** Publishes one batch (or what PUBLISH_BUDGET_MS allows of it); answers how many events. */
  async publishBatch(): Promise<number> {
    return (await this.publishSome()).published;
  }

  /**
   * One batch, in order, for as long as PUBLISH_BUDGET_MS allows (counted from the transaction's
   * start, the wait for another relay's lock included): the events published are marked, the rest
   * stay first in line. `more` when the batch was full or cut short: publish again at once.
   */
  private async publishSome(): Promise<{ published: number; more: boolean }> {
    return this.transactions.run(async (db) => {
      const started = Date.now();
      // One relay at a time across instances, so the stream keeps the outbox's order.
      await this.outbox.lockForPublishing(db);
      const rows = await this.outbox.lockBatch(db, BATCH);
      const sent: string[] = [];
      for (const row of rows) {
        // At least one each time, so a slow broker slows the relay down but never stops it.
        if (sent.length > 0 && Date.now() - started >= PUBLISH_BUDGET_MS) break;
        await this.publisher.publish(row.type, JSON.stringify(row.payload), row.id);
        sent.push(row.id);
      }
      if (sent.length > 0) await this.outbox.markPublished(db, sent, new Date());
      this.published.inc(sent.length);
      return { published: sent.length, more: rows.length >= BATCH || sent.length < rows.length };
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
