import { Clock } from '@acct/clock';
import { PeriodicDeletion } from '@acct/database';
import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';

import { IdempotencyRepository } from './idempotency.repository';
import { PURGE_INTERVAL_MS } from './idempotency-rules';

/** Deletes expired idempotency keys at start and then hourly (expired keys are also ignored when met). */
@Injectable()
export class IdempotencyPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly deletion: PeriodicDeletion;

  constructor(keys: IdempotencyRepository, clock: Clock) {
    this.deletion = new PeriodicDeletion({
      what: 'expired idempotency keys',
      intervalMs: PURGE_INTERVAL_MS,
      deleteBatch: (now) => keys.purgeExpired(now),
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
