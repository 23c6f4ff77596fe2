import { valueWithin } from '@acct/observability';
import type { NatsConnection } from 'nats';

/** How long a stop waits for a connection's drain: a NATS that answers at all answers in milliseconds. */
export const DRAIN_TIMEOUT_MS = 2000;

/**
 * Drains a connection (what it sent is flushed, its subscriptions end), then it is closed. A NATS that
 * hangs (partitioned, its node stopped: the socket open, nothing answering) never answers the drain's
 * flush, and a stop waiting for it would hold the process until its shutdown grace ran out (exit 1):
 * past `timeoutMs` the connection is closed without it.
 */
export async function drainConnection(
  connection: NatsConnection | undefined,
  timeoutMs = DRAIN_TIMEOUT_MS,
): Promise<void> {
  if (!connection || connection.isClosed()) return;
  const drained = connection.drain().then(
    () => true,
    () => true,
  );
  if (!(await valueWithin(drained, timeoutMs, false))) await connection.close().catch(() => undefined);
}
