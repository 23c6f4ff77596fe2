import { DomainError } from '@acct/problem';

/** Contract §3 / interface §8: the same key answers the same for 24 hours. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** An in-progress claim not finished within this time was abandoned (its worker died) and may be taken over. */
export const CLAIM_LEASE_MS = 60 * 1000;
/** How often expired keys are deleted (also once at start). */
export const PURGE_INTERVAL_MS = 60 * 60 * 1000;
/** Keys one purge statement deletes at most: a purge goes batch after batch. */
export const PURGE_BATCH = 1000;

/** Contract §3: 1–255 printable ASCII characters. */
export function idempotencyKeyProblem(key: string): string | undefined {
  return /^[\x20-\x7e]{1,255}$/.test(key) ? undefined : 'must be 1–255 printable ASCII characters';
}

/** What was answered the first time: a success status and its body, or a domain error's status and payload. */
export interface StoredOutcome {
  status: number;
  body: unknown;
}

/** A key as found in the store. */
export type StoredKey = {
  fingerprint: string;
  claimToken: string;
  expiresAt: Date;
} & ({ state: 'in_progress'; lockedUntil: Date } | { state: 'completed'; outcome: StoredOutcome });

export type Decision =
  /** Older than the window: forget it and treat the request as new. */
  | { action: 'expired' }
  /** Same key, another request: `422 idempotency_key_reused`. */
  | { action: 'reused' }
  /** The first request is still being processed: `409 idempotency_key_in_use`. */
  | { action: 'in_use' }
  /** The first request's worker went away without finishing: take its claim over. */
  | { action: 'take_over' }
  /** Answer what was answered the first time. */
  | { action: 'replay'; outcome: StoredOutcome };

/** What to do with a request whose key is already stored. */
export function decide(existing: StoredKey, fingerprint: string, now: Date): Decision {
  if (existing.expiresAt.getTime() <= now.getTime()) return { action: 'expired' };
  if (existing.fingerprint !== fingerprint) return { action: 'reused' };
  switch (existing.state) {
    case 'in_progress':
      return existing.lockedUntil.getTime() > now.getTime() ? { action: 'in_use' } : { action: 'take_over' };
    case 'completed':
      return { action: 'replay', outcome: existing.outcome };
  }
}

/**
 * Failures answered again on a retry: the request's own fault (4xx). Never 429 (a later retry may
 * pass), never 5xx or unexpected errors (a retry must be able to succeed): those release the key.
 */
export function isStoredFailure(error: unknown): error is DomainError {
  return error instanceof DomainError && error.status >= 400 && error.status < 500 && error.status !== 429;
}
