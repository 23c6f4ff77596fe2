/** One quota of a plan: interface §2.5's dimension, name and unit, and its limit. */
export interface QuotaDefinition {
  dimension: 'compute' | 'storage' | 'network' | 'api';
  name: string;
  unit: 'core' | 'count' | 'GB' | 'req/day';
  limit: number;
}

export const QUOTA_DIMENSIONS = ['compute', 'storage', 'network', 'api'] as const;

/** The standard plan's quotas (plan defaults live in code; orgs' overrides in the database). */
export const STANDARD_QUOTAS: readonly QuotaDefinition[] = [
  { dimension: 'compute', name: 'vCPU cores', unit: 'core', limit: 64 },
  { dimension: 'compute', name: 'Instances', unit: 'count', limit: 20 },
  { dimension: 'storage', name: 'Object storage', unit: 'GB', limit: 1024 },
  { dimension: 'network', name: 'Egress traffic', unit: 'GB', limit: 500 },
  { dimension: 'api', name: 'API requests', unit: 'req/day', limit: 100_000 },
  { dimension: 'api', name: 'Users', unit: 'count', limit: 100 },
];

export const PLAN_QUOTAS: Record<string, readonly QuotaDefinition[]> = { standard: STANDARD_QUOTAS };
