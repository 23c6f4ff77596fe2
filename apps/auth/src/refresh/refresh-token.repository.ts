import { escapeControlCharacters } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';

/** A refresh token as stored (no Prisma type leaves this file); the token itself only as a hash. */
export interface StoredRefreshToken {
  id: string;
  familyId: string;
  parentId: string | null;
  userId: string;
  orgId: string;
  clientId: string;
  scopes: string[];
  roles: string[];
  createdAt: Date;
  expiresAt: Date;
  firstUsedAt: Date | null;
  revokedAt: Date | null;
}

export type NewRefreshToken = Omit<StoredRefreshToken, 'firstUsedAt' | 'revokedAt'> & {
  tokenHash: string;
  /** A family's first token only. */
  origin?: SessionOrigin;
};

/** Where a session began, as the gateway saw it (each may be empty). */
export interface SessionOrigin {
  ip: string;
  deviceId: string;
  userAgent: string;
}

/** A live refresh family, as its session list shows it. */
export interface StoredSession {
  id: string;
  clientId: string;
  createdAt: Date;
  lastUsedAt: Date;
  origin: SessionOrigin;
}

/**
 * One family's tokens, inside a transaction that holds the family's advisory lock. Rotations take it
 * shared (they run side by side; first use is claimed with a conditional update), a revocation takes
 * it exclusive: it waits for rotations in flight, so the tokens they create are revoked too, and
 * rotations after it see their token revoked.
 */
export class RefreshTokenFamily {
  constructor(
    private readonly tx: Prisma.TransactionClient,
    readonly familyId: string,
  ) {}

  async findByHash(tokenHash: string): Promise<StoredRefreshToken | undefined> {
    const row = await this.tx.refreshToken.findUnique({ where: { tokenHash } });
    return row && row.familyId === this.familyId ? toStored(row) : undefined;
  }

  /**
   * Records the first use of a token that is usable now (not revoked, not expired, issued to
   * `clientId` when given) and answers it as it is then; undefined when the token is not usable or
   * some use was recorded already (then read it with findByHash). One statement for the common case.
   */
  async claimFirstUseIfUsable(
    tokenHash: string,
    at: Date,
    clientId: string | undefined,
  ): Promise<StoredRefreshToken | undefined> {
    const [row] = await this.tx.refreshToken.updateManyAndReturn({
      where: {
        tokenHash,
        familyId: this.familyId,
        firstUsedAt: null,
        revokedAt: null,
        expiresAt: { gt: at },
        ...(clientId ? { clientId } : {}),
      },
      data: { firstUsedAt: at },
    });
    return row ? toStored(row) : undefined;
  }

  /** Records the first use of a token; false when some use was recorded already. */
  async claimFirstUse(id: string, at: Date): Promise<boolean> {
    const { count } = await this.tx.refreshToken.updateMany({
      where: { id, familyId: this.familyId, firstUsedAt: null },
      data: { firstUsedAt: at },
    });
    return count === 1;
  }

  async insert(token: NewRefreshToken): Promise<void> {
    if (token.familyId !== this.familyId) throw new Error('a token joins its own family only');
    await this.tx.refreshToken.create({ data: toRow(token) });
  }

  async revokeAll(at: Date): Promise<number> {
    const { count } = await this.tx.refreshToken.updateMany({
      where: { familyId: this.familyId, revokedAt: null },
      data: { revokedAt: at },
    });
    return count;
  }
}

export type FamilyLock = 'shared' | 'exclusive';

/**
 * insertFirst's statement, a family's first token (no parent): every login's one write of this table,
 * sent without Prisma's runtime as a prepared statement.
 */
const INSERT_FIRST = `
  INSERT INTO refresh_tokens (id, family_id, token_hash, user_id, org_id, client_id, scope, roles, created_at,
                              expires_at, ip, device_id, user_agent)
  VALUES ($1::uuid, $2::uuid, $3, $4::uuid, $5::uuid, $6, $7, $8::text[], $9::timestamptz, $10::timestamptz, $11, $12,
          $13)`;

/**
 * rotateFirstUse's statement: $1 the used token's hash, $2 the time, $3 the client it must have been
 * issued to (null: any), $4, $5 and $6 the successor's id, hash and expiry. Sent without Prisma's
 * runtime, as a prepared statement: it is a refresh's one round trip. The first use is stamped $2 plus
 * however long the statement waited in the server (for the family's lock, a stalled database; measured
 * on the server's one clock): a claim carried out after its caller gave up starts the grace window
 * when it happened, not when it was asked for, so the client's retry is not taken for a reuse.
 */
const ROTATE_FIRST_USE = `
  WITH token AS MATERIALIZED (SELECT family_id FROM refresh_tokens WHERE token_hash = $1::text),
  locked AS MATERIALIZED (
    SELECT family_id,
           pg_advisory_xact_lock_shared(hashtext('auth:refresh_family'), hashtext(family_id::text))::text AS locked
    FROM token),
  claimed AS (
    UPDATE refresh_tokens AS r SET first_used_at = $2::timestamptz + (clock_timestamp() - statement_timestamp())
    FROM locked
    WHERE r.token_hash = $1::text AND r.family_id = locked.family_id AND r.first_used_at IS NULL
      AND r.revoked_at IS NULL AND r.expires_at > $2::timestamptz
      AND ($3::text IS NULL OR r.client_id = $3::text)
    RETURNING r.*),
  inserted AS (
    INSERT INTO refresh_tokens (id, family_id, parent_id, token_hash, user_id, org_id, client_id, scope, roles,
                                created_at, expires_at)
    SELECT $4::uuid, family_id, id, $5::text, user_id, org_id, client_id, scope, roles, $2::timestamptz,
           $6::timestamptz
    FROM claimed
    RETURNING id)
  SELECT id::text, family_id::text AS "familyId", parent_id::text AS "parentId", user_id::text AS "userId",
         org_id::text AS "orgId", client_id AS "clientId", scope, roles, created_at AS "createdAt",
         expires_at AS "expiresAt", first_used_at AS "firstUsedAt", revoked_at AS "revokedAt"
  FROM claimed WHERE EXISTS (SELECT 1 FROM inserted)`;

/** Where a prune's next batch starts: after this token in (`expires_at`, `id`) order. */
export interface PruneCursor {
  expiresAt: Date;
  id: string;
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** pruneExpired's statement: $1 the expiry, $2 and $3 the cursor, $4 the batch. */
const PRUNE_EXPIRED = `
  WITH looked AS MATERIALIZED (
    SELECT ctid, id, family_id, parent_id, expires_at FROM refresh_tokens
    WHERE expires_at <= $1::timestamptz AND (expires_at, id) > ($2::timestamptz, $3::uuid)
    ORDER BY expires_at, id
    LIMIT $4::int),
  deleted AS (
    DELETE FROM refresh_tokens AS r USING looked
    WHERE r.ctid = looked.ctid
      AND (looked.parent_id IS NOT NULL OR NOT EXISTS (
        SELECT 1 FROM refresh_tokens AS l WHERE l.family_id = looked.family_id AND l.expires_at > $1::timestamptz))
    RETURNING 1),
  last AS (SELECT expires_at, id FROM looked ORDER BY expires_at DESC, id DESC LIMIT 1)
  SELECT (SELECT count(*) FROM deleted)::int AS deleted, (SELECT count(*) FROM looked)::int AS looked,
         (SELECT expires_at FROM last) AS last_expires_at, (SELECT id::text FROM last) AS last_id`;

/** `refresh_tokens`. */
@Injectable()
export class RefreshTokenRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A token by its hash, read without a lock (revocation, introspection). */
  async findByHash(tokenHash: string): Promise<StoredRefreshToken | undefined> {
    const row = await this.prisma.refreshToken.findUnique({ where: { tokenHash } });
    return row ? toStored(row) : undefined;
  }

  /**
   * The families of a user in `orgId` begun before `before` that still hold a token neither revoked
   * nor expired (a family's first token is its oldest: `parentId` null).
   */
  async liveFamiliesOf(orgId: string, userId: string, now: Date, before: Date): Promise<string[]> {
    const begun = await this.prisma.refreshToken.findMany({
      where: { orgId, userId, parentId: null, createdAt: { lt: before } },
      select: { familyId: true },
    });
    const rows = await this.prisma.refreshToken.findMany({
      where: {
        orgId,
        userId,
        revokedAt: null,
        expiresAt: { gt: now },
        familyId: { in: begun.map((row) => row.familyId) },
      },
      select: { familyId: true },
      distinct: ['familyId'],
    });
    return rows.map((row) => row.familyId);
  }

  /**
   * The sessions of a user in `orgId` that an authorization code exchange began at or after `since`,
   * of a sign-in before `before` (the code's creation), however late the exchange: the family ids
   * recorded on the codes. An exchange by a client not registered for refresh_token starts no
   * refresh token, so only the code knows its family, which its access token carries as `sid` (and a
   * client's own refresh tokens are here too, which does no harm).
   */
  async familiesExchangedBy(orgId: string, userId: string, since: Date, before: Date): Promise<string[]> {
    const codes = await this.prisma.authorizationCode.findMany({
      where: { orgId, userId, familyId: { not: null }, createdAt: { lt: before }, usedAt: { gte: since } },
      select: { familyId: true },
    });
    return codes.flatMap((code) => (code.familyId ? [code.familyId] : []));
  }

  /**
   * The live families of a user in `orgId` (a token neither revoked nor expired), newest first: where
   * each began (its first token) and when it was last refreshed (its newest token's creation).
   */
  async sessionsOf(orgId: string, userId: string, now: Date): Promise<StoredSession[]> {
    const live = await this.prisma.refreshToken.groupBy({
      by: ['familyId'],
      where: { orgId, userId, revokedAt: null, expiresAt: { gt: now } },
      _max: { createdAt: true },
    });
    if (live.length === 0) return [];
    const lastUsed = new Map(live.map((row) => [row.familyId, row._max.createdAt]));
    const firsts = await this.prisma.refreshToken.findMany({
      where: { orgId, userId, parentId: null, familyId: { in: [...lastUsed.keys()] } },
      orderBy: [{ createdAt: 'desc' }, { familyId: 'desc' }],
    });
    return firsts.map((row) => ({
      id: row.familyId,
      clientId: row.clientId,
      createdAt: row.createdAt,
      lastUsedAt: lastUsed.get(row.familyId) ?? row.createdAt,
      origin: { ip: row.ip ?? '', deviceId: row.deviceId ?? '', userAgent: row.userAgent ?? '' },
    }));
  }

  /** The first token of a new family (a login); nobody else can know the family yet. */
  async insertFirst(token: NewRefreshToken): Promise<void> {
    const row = toRow(token);
    await this.prisma.direct.query(INSERT_FIRST, [
      row.id,
      row.familyId,
      row.tokenHash,
      row.userId,
      row.orgId,
      row.clientId,
      row.scope,
      row.roles,
      row.createdAt,
      row.expiresAt,
      row.ip,
      row.deviceId,
      row.userAgent,
    ]);
  }

  /**
   * The common rotation in one statement (its own transaction, so one round trip instead of five): takes
   * the family's lock shared, claims the first use of the token with `tokenHash` when it is usable now
   * (not used, not revoked, not expired, issued to `clientId` when given) and inserts its successor
   * `next` with the same grant. Answers the claimed token as it is then; undefined when nothing was
   * claimed (no such token, or not usable, or used before): then nothing changed and the caller takes
   * the full path (inFamilyOfToken). The lock is taken before the update finds its row, and READ
   * COMMITTED rechecks a row a revocation committed meanwhile, so a revoked token is never claimed, and
   * a revocation waits for this statement, so the successor it inserted is revoked too.
   */
  async rotateFirstUse(
    tokenHash: string,
    at: Date,
    clientId: string | undefined,
    next: { id: string; tokenHash: string; expiresAt: Date },
  ): Promise<StoredRefreshToken | undefined> {
    const rows = await this.prisma.direct.query<RawRefreshToken>(ROTATE_FIRST_USE, [
      tokenHash,
      at,
      clientId ?? null,
      next.id,
      next.tokenHash,
      next.expiresAt,
    ]);
    return rows[0] ? toStored(rows[0]) : undefined;
  }

  /**
   * One batch of the prune: looks at up to `batch` tokens that expired at or before `expiredAt`, after
   * `after` in (`expires_at`, `id`) order (the index on both), and deletes them but a family's first
   * token while any of its tokens has not expired (where the session began: its session list shows it,
   * and ending the user's sessions reads it). Answers how many it deleted and, when it looked at a whole
   * batch, where the next one starts (so a run never reads a kept token twice).
   */
  async pruneExpired(
    expiredAt: Date,
    after: PruneCursor | undefined,
    batch: number,
  ): Promise<{ deleted: number; next?: PruneCursor }> {
    const [row] = await this.prisma.direct.query<{
      deleted: number;
      looked: number;
      last_expires_at: Date | null;
      last_id: string | null;
    }>(PRUNE_EXPIRED, [expiredAt, after?.expiresAt ?? new Date(0), after?.id ?? NIL_UUID, batch]);
    const next =
      row.looked === batch && row.last_expires_at && row.last_id
        ? { expiresAt: row.last_expires_at, id: row.last_id }
        : undefined;
    return { deleted: row.deleted, next };
  }

  /**
   * Runs `work` in one transaction holding the lock of the family the token with `tokenHash` belongs
   * to, found and locked in one statement; undefined (and no lock) when no token has that hash.
   */
  inFamilyOfToken<T>(
    tokenHash: string,
    lock: FamilyLock,
    work: (family: RefreshTokenFamily) => Promise<T>,
  ): Promise<T | undefined> {
    return this.prisma.$transaction(
      async (tx) => {
        // MATERIALIZED: the lock is taken for the one row the hash names, whatever plan Postgres picks.
        const rows =
          lock === 'shared'
            ? await tx.$queryRaw<Array<{ familyId: string }>>`
              WITH token AS MATERIALIZED (SELECT family_id FROM refresh_tokens WHERE token_hash = ${tokenHash})
              SELECT family_id::text AS "familyId",
                     pg_advisory_xact_lock_shared(hashtext('auth:refresh_family'), hashtext(family_id::text))::text AS locked
              FROM token`
            : await tx.$queryRaw<Array<{ familyId: string }>>`
              WITH token AS MATERIALIZED (SELECT family_id FROM refresh_tokens WHERE token_hash = ${tokenHash})
              SELECT family_id::text AS "familyId",
                     pg_advisory_xact_lock(hashtext('auth:refresh_family'), hashtext(family_id::text))::text AS locked
              FROM token`;
        const familyId = rows[0]?.familyId;
        return familyId === undefined ? undefined : work(new RefreshTokenFamily(tx, familyId));
      },
      { maxWait: 5000, timeout: 10_000 },
    );
  }

  /** Runs `work` in one transaction holding the family's lock. */
  inFamily<T>(familyId: string, lock: FamilyLock, work: (family: RefreshTokenFamily) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(
      async (tx) => {
        if (lock === 'shared') {
          await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(hashtext('auth:refresh_family'), hashtext(${familyId}))`;
        } else {
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('auth:refresh_family'), hashtext(${familyId}))`;
        }
        return work(new RefreshTokenFamily(tx, familyId));
      },
      { maxWait: 5000, timeout: 10_000 },
    );
  }
}

const toRow = (token: NewRefreshToken) => ({
  id: token.id,
  familyId: token.familyId,
  parentId: token.parentId,
  tokenHash: token.tokenHash,
  userId: token.userId,
  orgId: token.orgId,
  clientId: token.clientId,
  scope: token.scopes.join(' '),
  roles: token.roles,
  createdAt: token.createdAt,
  expiresAt: token.expiresAt,
  ip: originValue(token.origin?.ip, 64),
  deviceId: originValue(token.origin?.deviceId, 200),
  userAgent: originValue(token.origin?.userAgent, 400),
});

/**
 * Where a session began, as the client's headers said (X-Device-Id, User-Agent), kept as the login
 * audit keeps them (LoginAudit): control characters escaped (`\u0085`), then cut to `max`. A header may
 * carry a tab or, read as Latin-1, C1 controls (NEL, CSI); stored raw, the sessions list handed them
 * on to whoever reads it, invisible or acted on by a terminal.
 */
const originValue = (value: string | undefined, max: number) =>
  value ? escapeControlCharacters(value).slice(0, max) : null;

/** A refresh_tokens row as Prisma and the raw queries answer it (the columns toStored reads). */
interface RawRefreshToken {
  id: string;
  familyId: string;
  parentId: string | null;
  userId: string;
  orgId: string;
  clientId: string;
  scope: string;
  roles: string[];
  createdAt: Date;
  expiresAt: Date;
  firstUsedAt: Date | null;
  revokedAt: Date | null;
}

function toStored(row: RawRefreshToken): StoredRefreshToken {
  return {
    id: row.id,
    familyId: row.familyId,
    parentId: row.parentId,
    userId: row.userId,
    orgId: row.orgId,
    clientId: row.clientId,
    scopes: row.scope.split(' ').filter(Boolean),
    roles: row.roles,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    firstUsedAt: row.firstUsedAt,
    revokedAt: row.revokedAt,
  };
}
