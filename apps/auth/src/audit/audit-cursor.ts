import { DomainError } from '@acct/problem';

/** A position in a list ordered newest first by (`at`, `id`): the last entry of the page before. */
export interface AuditPosition {
  at: Date;
  id: string;
}

/** 0001-01-01T00:00:00Z: no entry is older, and every later instant a `Date` holds fits a timestamptz. */
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const invalidCursor = () =>
  new DomainError('validation_failed', 'cursor is not one this list returned.', {
    errors: [{ field: 'cursor', message: 'must be a next_cursor of this list' }],
  });

/** The opaque `next_cursor` of a page ending at `position` (base64url; its content is not a contract). */
export const encodeCursor = (position: AuditPosition): string =>
  Buffer.from(JSON.stringify([position.at.toISOString(), position.id])).toString('base64url');

/** The position a cursor stands for; empty: the start. Anything this service did not write is refused. */
export function decodeCursor(cursor: string): AuditPosition | undefined {
  if (!cursor) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalidCursor();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || !UUID.test(id)) throw invalidCursor();
  const date = new Date(at);
  // A time Postgres cannot hold (before 4713 BC, or the year 0 it has no notation for) is not one we wrote.
  if (Number.isNaN(date.getTime()) || date.getTime() < EARLIEST) throw invalidCursor();
  return { at: date, id };
}

/** The page size asked for: 1–100, 20 when not given (contract §7). */
export function pageSize(limit: number): number {
  if (!limit) return 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new DomainError('validation_failed', 'limit must be between 1 and 100.', {
      errors: [{ field: 'limit', message: 'must be an integer from 1 to 100' }],
    });
  }
  return limit;
}

/**
 * The Prisma condition "strictly after `position`" in newest-first order: older, or as old with a
 * smaller id. Keyset pagination: no OFFSET, so rows added while paging are neither skipped nor repeated.
 * `at <= position.at` says nothing the OR does not, but Postgres starts the index scan at it: from the
 * OR alone it read every newer entry of the org and filtered them out (a page deep in a large org's
 * audit read the whole org's history after it).
 */
export const olderThan = (position: AuditPosition | undefined) =>
  position
    ? {
        at: { lte: position.at },
        OR: [{ at: { lt: position.at } }, { at: position.at, id: { lt: position.id } }],
      }
    : {};

/** One page (`limit` + 1 rows were read) and the cursor of the next, when there is one. */
export function pageOf<Row extends AuditPosition>(rows: Row[], limit: number): { rows: Row[]; next: string } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { rows: page, next: rows.length > limit && last ? encodeCursor(last) : '' };
}
