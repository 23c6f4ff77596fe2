import { Clock } from '@acct/clock';
import { PeriodicDeletion, PeriodicDeletionTask } from '@acct/database';
import { STREAM_MAX_AGE_MS } from '@acct/events';
import { Injectable, Logger } from '@nestjs/common';

import { OutboxRepository } from './outbox.repository';

/**
 * How long a published event stays in the outbox: as long as the stream keeps it, and a day more.
 * Republishing one (docs/runbook.md) serves its consumers only while the stream would still hold it.
 */
export const OUTBOX_RETENTION_MS = STREAM_MAX_AGE_MS + 24 * 3600 * 1000;
/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const OUTBOX_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes the events published more than OUTBOX_RETENTION_MS ago, in batches so no run holds many row
 * locks at once. Each event keeps its user's e-mail address and name (every creation, change and
 * deletion): without it they stayed in the outbox for good, a deleted user's too. An event not yet
 * published is never deleted, however old.
 */
@Injectable()
export class OutboxPruner extends PeriodicDeletionTask {
  constructor(repository: OutboxRepository, clock: Clock) {
    super(
      new PeriodicDeletion({
        what: 'published outbox events',
        intervalMs: OUTBOX_PRUNE_INTERVAL_MS,
        deleteBatch: (now) => repository.prunePublished(new Date(now.getTime() - OUTBOX_RETENTION_MS), BATCH),
        batchSize: BATCH,
        clock,
        logger: new Logger('outbox-pruner'),
      }),
    );
  }
}
