import { ReadinessCheck } from '@acct/observability';
import { PrismaPg } from '@prisma/adapter-pg';

/** The driver adapter every service's Prisma 7 client runs on (no Rust engine). */
export function pgAdapter(connectionString: string, options: { connectTimeoutMs?: number; poolSize?: number } = {}) {
  return new PrismaPg({
    connectionString,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    max: options.poolSize ?? 10,
  });
}

interface Queryable {
  $queryRaw(query: TemplateStringsArray): Promise<unknown>;
}

/** Ready while the service's own database answers. */
export class DatabaseReadiness implements ReadinessCheck {
  readonly name = 'database';
  constructor(private readonly client: Queryable) {}

  async check() {
    await this.client.$queryRaw`SELECT 1`;
  }
}

/** Prisma's unique-constraint violation, optionally on a given column. */
export function isUniqueViolation(error: unknown, column?: string): boolean {
  const { code, meta } = (error ?? {}) as { code?: string; meta?: Record<string, unknown> };
  if (code !== 'P2002') return false;
  if (!column) return true;
  return JSON.stringify(meta ?? {}).includes(column);
}
