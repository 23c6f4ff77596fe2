import { Clock } from '@acct/clock';
import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';

import { IdempotencyRepository } from './idempotency.repository';
import { PURGE_INTERVAL_MS } from './idempotency-rules';

/** Deletes expired idempotency keys at start and then hourly (expired keys are also ignored when met). */
@Injectable()
export class IdempotencyPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(IdempotencyPurger.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap() {
    void this.purge();
    this.timer = setInterval(() => void this.purge(), PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy() {
    clearInterval(this.timer);
  }

  /** One purge; never throws (a database outage only delays it). Returns how many keys went. */
  purge(): Promise<number> {
    this.running ??= this.keys
      .purgeExpired(this.clock.date())
      .then((count) => {
        if (count > 0) this.logger.log(`purged ${count} expired idempotency keys`);
        return count;
      })
      .catch((error: unknown) => {
        this.logger.warn(`could not purge expired idempotency keys: ${String(error)}`);
        return 0;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }
}
