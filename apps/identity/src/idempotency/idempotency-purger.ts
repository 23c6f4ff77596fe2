import { Clock } from '@acct/clock';
import { PeriodicDeletion } from '@acct/database';
import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';

import { IdempotencyRepository } from './idempotency.repository';
import { PURGE_BATCH, PURGE_INTERVAL_MS } from './idempotency-rules';

/**
 * Deletes expired idempotency keys at start and then hourly (expired keys are also ignored when met),
 * in batches.
 */
@Injectable()
export class IdempotencyPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly deletion: PeriodicDeletion;

  constructor(keys: IdempotencyRepository, clock: Clock) {
    this.deletion = new PeriodicDeletion({
      what: 'expired idempotency keys',
      intervalMs: PURGE_INTERVAL_MS,
      // In batches, so that no purge holds many row locks at once: a day of keys (one per retried
      // POST, each with its stored answer) expires an hour's worth a run, or all at once after an outage.
      deleteBatch: (now) => keys.purgeExpired(now, PURGE_BATCH),
      batchSize: PURGE_BATCH,
      clock,
      logger: new Logger(IdempotencyPurger.name),
    });
  }

  onApplicationBootstrap() {
    void this.purge();
    this.deletion.start();
  }

  onModuleDestroy() {
    // A purge in progress is not waited for: it only deletes keys that are ignored anyway.
    void this.deletion.stop();
  }

  /** One purge; never throws (a database outage only delays it). Returns how many keys went. */
  purge(): Promise<number> {
    return this.deletion.run().catch(() => 0);
  }
}
