import { parseBatch, RevocableToken } from './revocation';
import { RevocationSet } from './revocation-set';

describe('RevocationSet', () => {
  let now: number;
  let set: RevocationSet;
  const T0 = Date.parse('2026-11-23T10:00:00.000Z');
  const token = (overrides: Partial<RevocableToken> = {}): RevocableToken => ({
    jti: 'jti-1',
    sid: 'family-1',
    sub: 'user-1',
    orgId: 'org-1',
    iat: T0 / 1000 - 60,
    ...overrides,
  });

  beforeEach(() => {
    now = T0;
    set = new RevocationSet(() => now);
  });

  it('knows nothing at first', () => {
    expect(set.isRevoked(token())).toBe(false);
  });

  it('revokes one access token by jti until the entry expires, and no other', () => {
    set.add({ kind: 'token', jti: 'jti-1', expiresAt: T0 + 1000 });
    expect(set.isRevoked(token())).toBe(true);
    expect(set.isRevoked(token({ jti: 'jti-2' }))).toBe(false);
    now = T0 + 1000;
    expect(set.isRevoked(token())).toBe(false);
  });

  it('revokes every token of a refresh family, and leaves tokens without a family alone', () => {
    set.add({ kind: 'session', sid: 'family-1', expiresAt: T0 + 7_200_000 });
    expect(set.isRevoked(token({ jti: 'a' }))).toBe(true);
    expect(set.isRevoked(token({ jti: 'b', iat: T0 / 1000 + 10 }))).toBe(true);
    expect(set.isRevoked(token({ sid: 'family-2' }))).toBe(false);
    expect(set.isRevoked(token({ sid: undefined }))).toBe(false);
  });

  it('revokes a subject’s tokens of earlier seconds only, in that org only', () => {
    set.add({ kind: 'subject', orgId: 'org-1', sub: 'user-1', before: T0 + 400, expiresAt: T0 + 7_200_000 });
    expect(set.isRevoked(token({ sid: undefined, iat: T0 / 1000 - 1 }))).toBe(true);
    // The same second as the change: left to the family entries (see isRevoked).
    expect(set.isRevoked(token({ sid: undefined, iat: T0 / 1000 }))).toBe(false);
    expect(set.isRevoked(token({ sid: undefined, iat: T0 / 1000 + 1 }))).toBe(false);
    expect(set.isRevoked(token({ sid: undefined, iat: T0 / 1000 - 1, orgId: 'org-2' }))).toBe(false);
    expect(set.isRevoked(token({ sid: undefined, iat: T0 / 1000 - 1, sub: 'user-2' }))).toBe(false);
    expect(set.subjectRevokedBefore('org-1', 'user-1')).toBe(T0 + 400);
    expect(set.subjectRevokedBefore('org-2', 'user-1')).toBeUndefined();
  });

  it('says whether a subject’s sessions ended after a sign-in’s password check, in that org only', () => {
    set.add({ kind: 'subject', orgId: 'org-1', sub: 'user-1', before: T0 + 400, expiresAt: T0 + 7_200_000 });
    expect(set.subjectRevokedAfter('org-1', 'user-1', T0 + 399)).toBe(true);
    expect(set.subjectRevokedAfter('org-1', 'user-1', T0 + 400)).toBe(false);
    expect(set.subjectRevokedAfter('org-2', 'user-1', T0)).toBe(false);
    now = T0 + 7_200_000;
    expect(set.subjectRevokedAfter('org-1', 'user-1', T0)).toBe(false);
  });

  it('keeps the latest subject time whatever order the entries arrive in', () => {
    set.add({ kind: 'subject', orgId: 'org-1', sub: 'user-1', before: T0 + 10_000, expiresAt: T0 + 7_210_000 });
    set.add({ kind: 'subject', orgId: 'org-1', sub: 'user-1', before: T0, expiresAt: T0 + 7_200_000 });
    expect(set.isRevoked(token({ sid: undefined, iat: T0 / 1000 + 5 }))).toBe(true);
    now = T0 + 7_205_000;
    expect(set.isRevoked(token({ sid: undefined, iat: T0 / 1000 + 5 }))).toBe(true);
  });

  it('ignores entries that already expired and sweeps the ones that expire', () => {
    set.add({ kind: 'token', jti: 'old', expiresAt: T0 - 1 });
    expect(set.size).toBe(0);
    set.addAll([
      { kind: 'token', jti: 'jti-1', expiresAt: T0 + 1000 },
      { kind: 'session', sid: 'family-1', expiresAt: T0 + 5000 },
      { kind: 'subject', orgId: 'org-1', sub: 'user-1', before: T0, expiresAt: T0 + 9000 },
    ]);
    expect(set.size).toBe(3);
    now = T0 + 5000;
    set.sweep();
    expect(set.size).toBe(1);
    now = T0 + 9000;
    set.sweep();
    expect(set.size).toBe(0);
  });

  it('is idempotent: the same entry twice is one entry', () => {
    set.add({ kind: 'token', jti: 'jti-1', expiresAt: T0 + 1000 });
    set.add({ kind: 'token', jti: 'jti-1', expiresAt: T0 + 1000 });
    expect(set.size).toBe(1);
  });
});

describe('parseBatch', () => {
  it('accepts a batch of well-formed revocations', () => {
    expect(parseBatch('[{"kind":"token","jti":"x","expiresAt":1}]')).toEqual([
      { kind: 'token', jti: 'x', expiresAt: 1 },
    ]);
  });

  it.each(['not json', '{}', '[{"kind":"everything","expiresAt":1}]', '[{"kind":"token","jti":"","expiresAt":1}]'])(
    'refuses %s',
    (json) => {
      expect(parseBatch(json)).toBeUndefined();
    },
  );
});
