import { ReadinessCheck } from '@acct/observability';
import { PrismaPg } from '@prisma/adapter-pg';

import { pendingMigrations, Queryable, shippedMigrations } from './migration-status';

export * from './migration-status';
export * from './periodic-deletion';

/** The driver adapter every service's Prisma 7 client runs on (no Rust engine). */
export function pgAdapter(connectionString: string, options: { connectTimeoutMs?: number; poolSize?: number } = {}) {
  return new PrismaPg({
    connectionString,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    max: options.poolSize ?? 10,
  });
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
