import { createHash } from 'node:crypto';

import { ReadinessCheck } from '@acct/observability';
import { PrismaPg } from '@prisma/adapter-pg';

import { pendingMigrations, Queryable, shippedMigrations } from './migration-status';

export * from './migration-status';
export * from './periodic-deletion';

export interface PgAdapterOptions {
  connectTimeoutMs?: number;
  poolSize?: number;
  /** Named prepared statements (see `statementNames`); off behind a pooler that cannot keep them. */
  preparedStatements?: boolean;
}

/** The driver adapter every service's Prisma 7 client runs on (no Rust engine). */
export function pgAdapter(connectionString: string, options: PgAdapterOptions = {}) {
  return new PrismaPg(
    {
      connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
      max: options.poolSize ?? 10,
    },
    options.preparedStatements === false ? {} : { statementNameGenerator: statementNames() },
  );
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
