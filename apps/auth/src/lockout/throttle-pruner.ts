import { Clock } from '@acct/clock';
import { PeriodicDeletion, PeriodicDeletionTask } from '@acct/database';
import { Injectable, Logger } from '@nestjs/common';

import { LOGIN_RULES } from './login-throttle';
import { LoginThrottleRepository } from './login-throttle.repository';

/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const THROTTLE_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes the (username, IP) pairs and account budgets whose window is over and that no lock holds:
 * a failed attempt leaves both rows behind (only a success clears its pair), so every username and
 * address an attacker sprays would stay in the tables for good. An attempt starts such a row anew, so
 * deleting it changes no decision.
 */
@Injectable()
export class ThrottlePruner extends PeriodicDeletionTask {
  constructor(repository: LoginThrottleRepository, clock: Clock) {
    super(
      new PeriodicDeletion({
        what: 'login throttles past their window',
        intervalMs: THROTTLE_PRUNE_INTERVAL_MS,
        deleteBatch: (now) => repository.pruneThrottles(now, LOGIN_RULES),
        clock,
        logger: new Logger('throttle-pruner'),
      }),
    );
  }
}
