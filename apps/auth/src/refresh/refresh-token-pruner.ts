import { Clock } from '@acct/clock';
import { PeriodicDeletion, PeriodicDeletionTask } from '@acct/database';
import { Injectable, Logger } from '@nestjs/common';

import { PruneCursor, RefreshTokenRepository } from './refresh-token.repository';

/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const REFRESH_TOKEN_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Expired tokens are kept a day past their expiry (a late failure still names its org in the audit). */
export const KEEP_EXPIRED_MS = 24 * 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes expired refresh tokens, in batches so no run holds many row locks at once: every refresh
 * adds a row, and an expired token is refused whether its row is there or not. A live family's first
 * token stays (RefreshTokenRepository.pruneExpired).
 */
@Injectable()
export class RefreshTokenPruner extends PeriodicDeletionTask {
  constructor(repository: RefreshTokenRepository, clock: Clock) {
    super(
      new PeriodicDeletion({
        what: 'expired refresh tokens',
        intervalMs: REFRESH_TOKEN_PRUNE_INTERVAL_MS,
        deleteBatch: (now, stopping) => deleteExpired(repository, new Date(now.getTime() - KEEP_EXPIRED_MS), stopping),
        clock,
        logger: new Logger('refresh-token-pruner'),
      }),
    );
  }
}

/**
 * A run's batches, one statement each, each starting where the last one stopped: the first tokens of
 * live sessions, kept, are read once a run, not once a batch. A stop ends it after the batch in hand.
 */
async function deleteExpired(
  repository: RefreshTokenRepository,
  expiredAt: Date,
  stopping: () => boolean,
): Promise<number> {
  let total = 0;
  let after: PruneCursor | undefined;
  do {
    const { deleted, next } = await repository.pruneExpired(expiredAt, after, BATCH);
    total += deleted;
    after = next;
  } while (after && !stopping());
  return total;
}
