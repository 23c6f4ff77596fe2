import { Clock } from '@acct/clock';
import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';

import { KNOWN_SOURCE_TTL_MS } from './account-ceiling.policy';
import { AccountCeilingRepository } from './account-ceiling.repository';

/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const KNOWN_SOURCE_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes the known login sources that no longer exempt anyone (last success over 90 days ago), in
 * batches so no run holds many row locks at once. The ceiling already ignores them; this keeps the
 * table to what counts, including for accounts that never log in again.
 */
@Injectable()
export class KnownSourcePruner implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('known-source-pruner');
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly repository: AccountCeilingRepository,
    private readonly clock: Clock,
  ) {}

  onModuleInit() {
    this.timer = setInterval(() => void this.prune().catch(() => undefined), KNOWN_SOURCE_PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  async onModuleDestroy() {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One run (one at a time per instance): answers how many sources it deleted. */
  prune(): Promise<number> {
    this.running ??= this.pruneAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pruneAll(): Promise<number> {
    const expiredAt = new Date(this.clock.now() - KNOWN_SOURCE_TTL_MS);
    let total = 0;
    try {
      for (;;) {
        const deleted = await this.repository.pruneSources(expiredAt, BATCH);
        total += deleted;
        if (deleted < BATCH) break;
      }
    } catch (error) {
      this.logger.warn(`known login sources not pruned: ${(error as Error).message}`);
      throw error;
    }
    if (total > 0) this.logger.log(`pruned ${total} expired known login sources`);
    return total;
  }
}
