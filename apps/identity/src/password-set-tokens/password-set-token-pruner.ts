import { Clock } from '@acct/clock';
import { PeriodicDeletion, PeriodicDeletionTask } from '@acct/database';
import { Injectable, Logger } from '@nestjs/common';

import { PasswordSetTokensRepository } from './password-set-tokens.repository';

/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const PASSWORD_SET_TOKEN_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes the activation and reset links that have expired, in batches so no run holds many row
 * locks at once: every activation mail and every reset adds a row, which stayed until its user was
 * deleted. An expired link is refused as an unknown one is (the same `unauthenticated`), so deleting
 * it changes no answer; a link still valid, used or not, stays.
 */
@Injectable()
export class PasswordSetTokenPruner extends PeriodicDeletionTask {
  constructor(repository: PasswordSetTokensRepository, clock: Clock) {
    super(
      new PeriodicDeletion({
        what: 'expired password-set tokens',
        intervalMs: PASSWORD_SET_TOKEN_PRUNE_INTERVAL_MS,
        deleteBatch: (now) => repository.pruneExpired(now, BATCH),
        batchSize: BATCH,
        clock,
        logger: new Logger('password-set-token-pruner'),
      }),
    );
  }
}
