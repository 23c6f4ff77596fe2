import { Clock } from '@acct/clock';
import { PeriodicDeletion, PeriodicDeletionTask } from '@acct/database';
import { Injectable, Logger } from '@nestjs/common';

import { LOGIN_RULES } from './login-throttle';
import { LoginThrottleRepository } from './login-throttle.repository';

/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const THROTTLE_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Rows of each table one statement deletes at most: a run goes batch after batch. */
export const THROTTLE_PRUNE_BATCH = 1000;

/**
 * Deletes the (username, IP) pairs and account budgets whose window is over and that no lock holds:
 * a failed attempt leaves both rows behind (only a success clears its pair), so every username and
 * address an attacker sprays would stay in the tables for good. An attempt starts such a row anew, so
 * deleting it changes no decision. In batches, so no run holds many row locks at once (the first run
 * after a spray may find many).
 */
@Injectable()
export class ThrottlePruner extends PeriodicDeletionTask {
  constructor(repository: LoginThrottleRepository, clock: Clock) {
    super(
      new PeriodicDeletion({
        what: 'login throttles past their window',
        intervalMs: THROTTLE_PRUNE_INTERVAL_MS,
        deleteBatch: (now) => repository.pruneThrottles(now, LOGIN_RULES, THROTTLE_PRUNE_BATCH),
        // A batch deletes up to this many of each table: one short of it leaves both tables done.
        batchSize: THROTTLE_PRUNE_BATCH,
        clock,
        logger: new Logger('throttle-pruner'),
      }),
    );
  }
}
