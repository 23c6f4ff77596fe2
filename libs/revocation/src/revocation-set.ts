import { RevocableToken, Revocation } from './revocation';

interface SubjectEntry {
  before: number;
  expiresAt: number;
}

const subjectKey = (orgId: string, sub: string) => `${orgId}\u0000${sub}`;

/**
 * The revocations a process knows, in memory: what the request path consults (no I/O). Adding is
 * idempotent and order-free (the union of everything seen), so notices and resyncs may overlap and
 * arrive in any order. Entries past their `expiresAt` stop counting and are swept away.
 */
export class RevocationSet {
  private readonly tokens = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  private readonly subjects = new Map<string, SubjectEntry>();

  constructor(private readonly now: () => number = Date.now) {}

  add(revocation: Revocation): void {
    if (revocation.expiresAt <= this.now()) return;
    switch (revocation.kind) {
      case 'token':
        this.tokens.set(revocation.jti, Math.max(revocation.expiresAt, this.tokens.get(revocation.jti) ?? 0));
        return;
      case 'session':
        this.sessions.set(revocation.sid, Math.max(revocation.expiresAt, this.sessions.get(revocation.sid) ?? 0));
        return;
      case 'subject': {
        const key = subjectKey(revocation.orgId, revocation.sub);
        const known = this.subjects.get(key);
        this.subjects.set(key, {
          before: Math.max(revocation.before, known?.before ?? 0),
          expiresAt: Math.max(revocation.expiresAt, known?.expiresAt ?? 0),
        });
        return;
      }
    }
  }

  addAll(revocations: Iterable<Revocation>): void {
    for (const revocation of revocations) this.add(revocation);
  }

  /**
   * Whether a verified token is revoked: by its `jti`, by its refresh family (`sid`), or because its
   * subject's tokens issued before some time were. `iat` has whole seconds: a token counts as issued
   * before `before` when its second is earlier than `before`'s (tokens of that same second that came
   * from a refresh family are covered by the family's own entry, written with it).
   */
  isRevoked(token: RevocableToken): boolean {
    const now = this.now();
    if ((this.tokens.get(token.jti) ?? 0) > now) return true;
    if (token.sid !== undefined && (this.sessions.get(token.sid) ?? 0) > now) return true;
    const subject = this.subjects.get(subjectKey(token.orgId, token.sub));
    return subject !== undefined && subject.expiresAt > now && token.iat < Math.floor(subject.before / 1000);
  }

  /**
   * The time before which `sub`'s tokens in `orgId` are revoked (ms), if any: for refresh tokens, whose
   * creation time auth compares itself.
   */
  subjectRevokedBefore(orgId: string, sub: string): number | undefined {
    const subject = this.subjects.get(subjectKey(orgId, sub));
    return subject && subject.expiresAt > this.now() ? subject.before : undefined;
  }

  /**
   * Whether `sub`'s sessions in `orgId` were ended after `at` (ms): a sign-in whose password was
   * checked at `at` ends with them, even when it finishes later.
   */
  subjectRevokedAfter(orgId: string, sub: string, at: number): boolean {
    const before = this.subjectRevokedBefore(orgId, sub);
    return before !== undefined && before > at;
  }

  /** Forgets the entries that can no longer affect any token. */
  sweep(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.tokens) if (expiresAt <= now) this.tokens.delete(key);
    for (const [key, expiresAt] of this.sessions) if (expiresAt <= now) this.sessions.delete(key);
    for (const [key, entry] of this.subjects) if (entry.expiresAt <= now) this.subjects.delete(key);
  }

  get size(): number {
    return this.tokens.size + this.sessions.size + this.subjects.size;
  }
}
