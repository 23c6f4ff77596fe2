import fs from 'node:fs';
import path from 'node:path';

/** Something raw SQL can be sent to: a Prisma client, or a plain `pg` client in tests. */
export interface Queryable {
  $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): Promise<T>;
}

/**
 * Where a service finds the migrations it ships: `MIGRATIONS_DIR` when set, otherwise
 * `apps/<service>/prisma/migrations` under the working directory (the repository root locally, `/app`
 * in the images).
 */
export function migrationsDir(service: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.MIGRATIONS_DIR || path.join('apps', service, 'prisma', 'migrations'));
}

/** The migrations in a folder: its subfolders holding a `migration.sql`, in the order Prisma applies them. */
export function shippedMigrations(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort();
}

/**
 * The shipped migrations the database has not applied: no row in Prisma's `_prisma_migrations`, or one
 * that did not finish or was rolled back. Every migration is pending on a database without that table.
 */
export async function pendingMigrations(client: Queryable, shipped: readonly string[]): Promise<string[]> {
  const [{ present }] = await client.$queryRaw<Array<{ present: boolean }>>`
    SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`;
  if (!present) return [...shipped];
  const applied = await client.$queryRaw<Array<{ migration_name: string }>>`
    SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
  const names = new Set(applied.map((row) => row.migration_name));
  return shipped.filter((name) => !names.has(name));
}
