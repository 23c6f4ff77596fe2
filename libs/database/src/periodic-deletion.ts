import { Clock } from '@acct/clock';

export interface PeriodicDeletionOptions {
  /** What it deletes, as its log lines name it ("expired idempotency keys"). */
  what: string;
  /** How often it runs once started. */
  intervalMs: number;
  /**
   * Deletes what is due at `now` (the run's start, the same for each of its batches), at most
   * `batchSize` rows when one is given, and answers how many rows it deleted. One that loops itself
   * ends after the batch in hand once `stopping()` says so.
   */
  deleteBatch: (now: Date, stopping: () => boolean) => Promise<number>;
  /**
   * A run deletes batch after batch until one deletes fewer than this, or the deletion is stopping;
   * without it, a run is one delete.
   */
  batchSize?: number;
  clock: Clock;
  logger: { log(message: string): void; warn(message: string): void };
}

/**
 * Deletes rows that are no longer needed (expired keys, stale records), every `intervalMs` and on
 * demand, one run at a time per instance; in batches, when a batch size is given, so that no run holds
 * many row locks at once. A delete is idempotent, so runs of several instances only repeat work.
 */
export class PeriodicDeletion {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private stopping = false;

  constructor(private readonly options: PeriodicDeletionOptions) {}

  /** Runs every `intervalMs` from now on (not at once); a failed run is logged and the next one tries again. */
  start(): void {
    this.timer = setInterval(() => void this.run().catch(() => undefined), this.options.intervalMs);
    this.timer.unref();
  }

  /** No run starts any more; answers once the run in progress, if any, has ended its batch in hand. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /**
   * One run (joins the one in progress, if any): answers how many rows it deleted. A failed batch ends
   * the run: it is logged and thrown.
   */
  run(): Promise<number> {
    this.running ??= this.deleteAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async deleteAll(): Promise<number> {
    const { what, deleteBatch, batchSize, clock, logger } = this.options;
    const now = clock.date();
    let total = 0;
    try {
      for (;;) {
        const deleted = await deleteBatch(now, () => this.stopping);
        total += deleted;
        if (batchSize === undefined || deleted < batchSize || this.stopping) break;
      }
    } catch (error) {
      logger.warn(`could not delete ${what}: ${(error as Error).message}`);
      throw error;
    }
    if (total > 0) logger.log(`deleted ${total} ${what}`);
    return total;
  }
}

/**
 * A provider that runs its deletion from its module's start to its stop (Nest calls these hooks of
 * any provider that has them): every instance deletes on its interval, and `prune` runs it once now.
 */
export abstract class PeriodicDeletionTask {
  protected constructor(private readonly deletion: PeriodicDeletion) {}

  onModuleInit(): void {
    this.deletion.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.deletion.stop();
  }

  /** One run (one at a time per instance): answers how many rows it deleted. */
  prune(): Promise<number> {
    return this.deletion.run();
  }
}
