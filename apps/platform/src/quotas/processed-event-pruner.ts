import { Clock } from '@acct/clock';
import { PeriodicDeletion, PeriodicDeletionTask } from '@acct/database';
import { STREAM_MAX_AGE_MS } from '@acct/events';
import { Injectable, Logger } from '@nestjs/common';

import { QuotasRepository } from './quotas.repository';

/** Every instance prunes hourly; a delete is idempotent, so overlapping runs only repeat work. */
export const PROCESSED_EVENT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** An applied event's id is kept a day longer than a stream keeps the event (its redeliveries end then). */
export const KEEP_PROCESSED_MS = STREAM_MAX_AGE_MS + 24 * 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes the ids of applied events (`processed_events`) once no stream can deliver them again, in
 * batches so no run holds many row locks at once: every usage report and user event adds one. An
 * event republished from identity's outbox later still counts once: a gauge never overwrites a newer
 * report, and `counted_users` keeps which of a user's creation and deletion were counted.
 */
@Injectable()
export class ProcessedEventPruner extends PeriodicDeletionTask {
  constructor(repository: QuotasRepository, clock: Clock) {
    super(
      new PeriodicDeletion({
        what: 'ids of events applied long ago',
        intervalMs: PROCESSED_EVENT_PRUNE_INTERVAL_MS,
        deleteBatch: (now) => repository.pruneProcessed(new Date(now.getTime() - KEEP_PROCESSED_MS), BATCH),
        batchSize: BATCH,
        clock,
        logger: new Logger('processed-event-pruner'),
      }),
    );
  }
}
