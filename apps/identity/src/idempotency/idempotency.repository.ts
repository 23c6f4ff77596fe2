import { Injectable } from '@nestjs/common';

import { IdempotencyKey, Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { Db } from '../prisma/transactions';
import { StoredKey, StoredOutcome } from './idempotency-rules';

/** Whose key it is: keys of different callers never meet. */
export interface KeyScope {
  orgId: string;
  /** `<kind>:<subject>`, e.g. `user:<id>` or `client:<id>`. */
  subject: string;
}

export interface KeyRef {
  scope: KeyScope;
  key: string;
}

export interface NewClaim {
  fingerprint: string;
  claimToken: string;
  now: Date;
  lockedUntil: Date;
  expiresAt: Date;
}

/** insertClaim's statement: a row only when the key was free ($1–$3 the key, then the claim's fields). */
const INSERT_CLAIM = `
  INSERT INTO idempotency_keys
    (org_id, subject, key, fingerprint, state, claim_token, created_at, locked_until, expires_at)
  VALUES ($1, $2, $3, $4, 'in_progress', $5::uuid, $6::timestamptz, $7::timestamptz, $8::timestamptz)
  ON CONFLICT DO NOTHING
  RETURNING 1 AS claimed`;

/** Idempotency keys. Every write that finishes a claim names the claim's token, so only its holder can. */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * INSERT … ON CONFLICT DO NOTHING: true when this call now holds the key. Raw, not Prisma's
   * `createMany({ skipDuplicates })`: Prisma caches no query plan for createMany and compiled this one
   * on every user creation (WebAssembly, half of identity's time in Prisma on `users-create`); and,
   * since every creation with a key sends it, a prepared statement without Prisma's runtime.
   */
  async insertClaim({ scope, key }: KeyRef, claim: NewClaim): Promise<boolean> {
    const inserted = await this.prisma.direct.query(INSERT_CLAIM, [
      scope.orgId,
      scope.subject,
      key,
      claim.fingerprint,
      claim.claimToken,
      claim.now,
      claim.lockedUntil,
      claim.expiresAt,
    ]);
    return inserted.length === 1;
  }

  async find({ scope, key }: KeyRef): Promise<StoredKey | null> {
    const row = await this.prisma.idempotencyKey.findUnique({
      where: { orgId_subject_key: { orgId: scope.orgId, subject: scope.subject, key } },
    });
    return row ? toStoredKey(row) : null;
  }

  /** Moves an abandoned in-progress claim from `previousToken` to `claimToken`; false if someone was faster. */
  async takeOver({ scope, key }: KeyRef, previousToken: string, claimToken: string, lockedUntil: Date) {
    const { count } = await this.prisma.idempotencyKey.updateMany({
      where: { ...scope, key, state: 'in_progress', claimToken: previousToken },
      data: { claimToken, lockedUntil },
    });
    return count === 1;
  }

  /** Stores the outcome; `db` is the transaction of the work it completes. False if the claim was lost. */
  async complete(
    { scope, key }: KeyRef,
    claimToken: string,
    outcome: StoredOutcome,
    now: Date,
    db: Db = this.prisma,
  ): Promise<boolean> {
    const { count } = await db.idempotencyKey.updateMany({
      where: { ...scope, key, state: 'in_progress', claimToken },
      data: {
        state: 'completed',
        responseStatus: outcome.status,
        responseBody: toJson(outcome.body),
        completedAt: now,
      },
    });
    return count === 1;
  }

  /** Forgets an in-progress claim (its work failed in a way a retry may get past). */
  async release({ scope, key }: KeyRef, claimToken: string): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { ...scope, key, state: 'in_progress', claimToken } });
  }

  async deleteIfExpired({ scope, key }: KeyRef, now: Date): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { ...scope, key, expiresAt: { lte: now } } });
  }

  /**
   * Deletes up to `batch` keys expired at `now` (the index on `expires_at`); answers how many. A key
   * taken over meanwhile is a new row and stays.
   */
  async purgeExpired(now: Date, batch: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM idempotency_keys WHERE expires_at <= ${now} LIMIT ${batch}))`;
  }
}

/** A JSON document as Prisma stores it (undefined members dropped, as JSON itself would). */
const toJson = (value: unknown): Prisma.InputJsonValue => JSON.parse(JSON.stringify(value)) as Prisma.InputJsonValue;

function toStoredKey(row: IdempotencyKey): StoredKey {
  const common = { fingerprint: row.fingerprint, claimToken: row.claimToken, expiresAt: row.expiresAt };
  switch (row.state) {
    case 'in_progress':
      return { ...common, state: 'in_progress', lockedUntil: row.lockedUntil };
    case 'completed':
      if (row.responseStatus === null) throw new Error('a completed idempotency key has no stored outcome');
      return { ...common, state: 'completed', outcome: { status: row.responseStatus, body: row.responseBody } };
  }
}
