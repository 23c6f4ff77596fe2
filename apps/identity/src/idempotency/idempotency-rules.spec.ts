import { DomainError } from '@acct/problem';

import { decide, idempotencyKeyProblem, isStoredFailure, StoredKey } from './idempotency-rules';

const now = new Date('2026-01-01T12:00:00.000Z');
const later = (ms: number) => new Date(now.getTime() + ms);
const outcome = { status: 201, body: { id: 'u1' } };

const inProgress = (
  overrides: Partial<{ lockedUntil: Date; expiresAt: Date; fingerprint: string }> = {},
): StoredKey => ({
  state: 'in_progress',
  fingerprint: 'f1',
  claimToken: 't1',
  lockedUntil: later(30_000),
  expiresAt: later(3_600_000),
  ...overrides,
});
const completed = (overrides: Partial<{ expiresAt: Date; fingerprint: string }> = {}): StoredKey => ({
  state: 'completed',
  fingerprint: 'f1',
  claimToken: 't1',
  outcome,
  expiresAt: later(3_600_000),
  ...overrides,
});

describe('decide', () => {
  it('replays a completed key asked again with the same request', () => {
    expect(decide(completed(), 'f1', now)).toEqual({ action: 'replay', outcome });
  });

  it('refuses the same key with another request, finished or not', () => {
    expect(decide(completed(), 'f2', now)).toEqual({ action: 'reused' });
    expect(decide(inProgress(), 'f2', now)).toEqual({ action: 'reused' });
  });

  it('answers in_use while the first request holds its lease', () => {
    expect(decide(inProgress(), 'f1', now)).toEqual({ action: 'in_use' });
  });

  it('takes over an in-progress key whose lease has run out (its worker is gone)', () => {
    expect(decide(inProgress({ lockedUntil: now }), 'f1', now)).toEqual({ action: 'take_over' });
    expect(decide(inProgress({ lockedUntil: later(-1) }), 'f1', now)).toEqual({ action: 'take_over' });
  });

  it('treats an expired key as absent, whatever it held and whatever is asked now', () => {
    expect(decide(completed({ expiresAt: now }), 'f1', now)).toEqual({ action: 'expired' });
    expect(decide(completed({ expiresAt: later(-1) }), 'another request', now)).toEqual({ action: 'expired' });
    expect(decide(inProgress({ expiresAt: later(-1) }), 'f1', now)).toEqual({ action: 'expired' });
  });
});

describe('isStoredFailure', () => {
  it.each(['validation_failed', 'forbidden', 'email_taken', 'not_found', 'quota_exceeded'] as const)(
    'stores the 4xx %s',
    (code) => expect(isStoredFailure(new DomainError(code, 'x'))).toBe(true),
  );

  it('never stores a 429, a 5xx or an unexpected error', () => {
    expect(isStoredFailure(new DomainError('rate_limited', 'x'))).toBe(false);
    expect(isStoredFailure(new DomainError('quota_exceeded', 'x', { status: 429 }))).toBe(false);
    expect(isStoredFailure(new DomainError('service_unavailable', 'x'))).toBe(false);
    expect(isStoredFailure(new DomainError('internal_error', 'x'))).toBe(false);
    expect(isStoredFailure(new Error('boom'))).toBe(false);
  });
});

describe('idempotencyKeyProblem', () => {
  it.each(['a', 'x'.repeat(255), '8e0c5b1a-1f43-4bd5-a0b8-3c9f2d9b3c11', ' spaces and ~!@#$%^&*() '])(
    'accepts %p',
    (key) => expect(idempotencyKeyProblem(key)).toBeUndefined(),
  );

  it.each(['', 'x'.repeat(256), 'tab\there', 'new\nline', 'ключ', 'del\u007f'])('refuses %j', (key) =>
    expect(idempotencyKeyProblem(key)).toBe('must be 1–255 printable ASCII characters'),
  );
});
