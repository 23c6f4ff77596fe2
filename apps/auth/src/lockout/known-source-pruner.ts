import { Clock } from '@acct/clock';
import { PeriodicDeletion, PeriodicDeletionTask } from '@acct/database';
import { Injectable, Logger } from '@nestjs/common';

import { KNOWN_SOURCE_TTL_MS } from './login-throttle';
import { LoginThrottleRepository } from './login-throttle.repository';

/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const KNOWN_SOURCE_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes the known login sources that no longer exempt anyone (last success over 90 days ago), in
 * batches so no run holds many row locks at once. The ceiling already ignores them; this keeps the
 * table to what counts, including for accounts that never log in again.
 */
@Injectable()
export class KnownSourcePruner extends PeriodicDeletionTask {
  constructor(repository: LoginThrottleRepository, clock: Clock) {
    super(
      new PeriodicDeletion({
        what: 'expired known login sources',
        intervalMs: KNOWN_SOURCE_PRUNE_INTERVAL_MS,
        deleteBatch: (now) => repository.pruneSources(new Date(now.getTime() - KNOWN_SOURCE_TTL_MS), BATCH),
        batchSize: BATCH,
        clock,
        logger: new Logger('known-source-pruner'),
      }),
    );
  }
}
