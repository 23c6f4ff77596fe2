import { createHash } from 'node:crypto';

import { ReadinessCheck } from '@acct/observability';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';

import { pendingMigrations, Queryable, shippedMigrations } from './migration-status';

export * from './migration-status';
export * from './periodic-deletion';

export interface PgAdapterOptions {
  connectTimeoutMs?: number;
  poolSize?: number;
  /** Named prepared statements (see `statementNames`); off behind a pooler that cannot keep them. */
  preparedStatements?: boolean;
  /** How long a statement may wait for its answer before it fails and its connection is closed. */
  queryTimeoutMs?: number;
}

/** pg's client as the pool gives it back: whether a statement on it still waits (not in pg's types). */
interface PooledClient {
  _getActiveQuery(): unknown;
  end(): Promise<void>;
}

/** The driver adapter every service's Prisma 7 client runs on (no Rust engine). */
export function pgAdapter(connectionString: string, options: PgAdapterOptions = {}) {
  return pgDatabase(connectionString, options).adapter;
}

/**
 * A service's one connection pool: its Prisma client runs on it through `adapter`, and `direct` runs
 * single statements on the same connections without Prisma's runtime. The adapter ends the pool when
 * the client disconnects.
 */
export function pgDatabase(connectionString: string, options: PgAdapterOptions = {}) {
  const pool = new pg.Pool({
    connectionString,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    max: options.poolSize ?? 10,
    // A server that stops answering on a connection without closing it (a failover, a partition, a hung
    // host) would hold that statement, and the connection's slot in the pool, for ever.
    query_timeout: options.queryTimeoutMs ?? 10_000,
    // Prisma's adapter sends a Date as UTC without an offset and reads a timestamptz's offset as +00:00:
    // both hold only in a UTC session, whatever zone the server or database defaults to.
    options: '-c TimeZone=UTC',
  });
  // A connection that fails while idle leaves the pool, and the next statement opens another: nothing
  // to do, but without a listener the pool's 'error' event would end the process.
  pool.on('error', () => undefined);
  // A connection given back while a statement on it still waits (it timed out: a transaction's client
  // is given back without the error) would answer nothing more: ended (pg then destroys its socket), the
  // pool drops it instead of handing it to the next statement.
  pool.on('release', (_error: unknown, client: unknown) => {
    const pooled = client as PooledClient;
    if (pooled._getActiveQuery()) void pooled.end().catch(() => undefined);
  });
  const names = options.preparedStatements === false ? () => '' : statementNames();
  return {
    adapter: new PrismaPg(pool, { statementNameGenerator: names, disposeExternalPool: true }),
    direct: new DirectStatements(pool, names),
  };
}

/**
 * One statement on the pool, straight through `pg`: for the few statements a hot request path sends
 * outside a transaction (a transaction's statements go through its Prisma client). Prisma's client
 * spends about 47 µs of CPU on a one-row `$queryRaw` beyond the 23 µs `pg` spends (one pool, ten in
 * flight), and identity's profile under `users-read` had 124 µs a request in Prisma and pg where bare
 * pg took 41 (README, Benchmarks). Statements are prepared by the same names as Prisma's. Rows come
 * as `pg` reads them: uuid and text as strings, timestamptz as Date, text[] as string[], bigint as a
 * string; cast in SQL whatever must come otherwise.
 */
export class DirectStatements {
  constructor(
    private readonly pool: pg.Pool,
    private readonly names: (query: { sql: string }) => string,
  ) {}

  async query<Row extends object>(text: string, values: unknown[]): Promise<Row[]> {
    const name = this.names({ sql: text });
    return (await this.pool.query<Row>(name ? { name, text, values } : { text, values })).rows;
  }
}

/**
 * Names for prepared statements, so each connection parses and plans a statement once and then only
 * binds and executes it: Postgres spent 110–118 µs of CPU on a one-row SELECT sent unnamed (parsed and
 * planned every time) and 40 µs on the same SELECT prepared (bench, 2026-11-26). Prisma's Rust engine
 * cached statements like this; its driver adapter does only when given names. A name is a hash of the
 * SQL text, so one text always has one name (pg refuses a name reused for another text). At most
 * `limit` texts get one, which bounds the statements a connection keeps on the server; any text beyond
 * them runs unnamed (the protocol's unnamed statement is the empty name), as every text did before.
 */
export function statementNames(limit = 1000): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined) {
      if (names.size >= limit) return '';
      name = `s_${createHash('sha256').update(sql).digest('base64url').slice(0, 22)}`;
      names.set(sql, name);
    }
    return name;
  };
}

/**
 * Ready while the service's own database answers and holds every migration the service ships (see
 * `migrationsDir`): a service started before its migrations ran stays unready, and names what is
 * missing, instead of failing on tables that are not there. Once complete, the schema is not compared
 * again (migrations are never unapplied); only `SELECT 1` runs.
 */
export class DatabaseReadiness implements ReadinessCheck {
  readonly name = 'database';
  private migrated = false;

  constructor(
    private readonly client: Queryable,
    /** The folder of the migrations the service ships (`migrationsDir(service)`). */
    private readonly migrations: string,
  ) {}

  async check() {
    await this.client.$queryRaw`SELECT 1`;
    if (this.migrated) return;
    let shipped: string[];
    try {
      shipped = shippedMigrations(this.migrations);
    } catch {
      throw new Error(`no migrations found in ${this.migrations} (set MIGRATIONS_DIR)`);
    }
    const pending = await pendingMigrations(this.client, shipped);
    if (pending.length > 0) {
      throw new Error(`${pending.length} of ${shipped.length} migrations not applied: ${pending.join(', ')}`);
    }
    this.migrated = true;
  }
}

/** Prisma's unique-constraint violation, optionally on a given column. */
export function isUniqueViolation(error: unknown, column?: string): boolean {
  const { code, meta } = (error ?? {}) as { code?: string; meta?: Record<string, unknown> };
  if (code !== 'P2002') return false;
  if (!column) return true;
  return JSON.stringify(meta ?? {}).includes(column);
}
