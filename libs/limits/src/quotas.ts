/** Interface §2.5's quota dimensions. */
export const QUOTA_DIMENSIONS = ['compute', 'storage', 'network', 'api'] as const;
export type QuotaDimension = (typeof QUOTA_DIMENSIONS)[number];

export const isQuotaDimension = (value: string): value is QuotaDimension =>
  (QUOTA_DIMENSIONS as readonly string[]).includes(value);

/** Which quota: a dimension and the quota's name within it (names are what clients and the CLI see). */
export interface QuotaKey {
  dimension: QuotaDimension;
  name: string;
}

export const VCPU_QUOTA = { dimension: 'compute', name: 'vCPU cores' } as const satisfies QuotaKey;
export const INSTANCES_QUOTA = { dimension: 'compute', name: 'Instances' } as const satisfies QuotaKey;
export const OBJECT_STORAGE_QUOTA = { dimension: 'storage', name: 'Object storage' } as const satisfies QuotaKey;
export const EGRESS_QUOTA = { dimension: 'network', name: 'Egress traffic' } as const satisfies QuotaKey;
/**
 * Counted by the gateways in Redis (`apiUsageKey`), per UTC day, and enforced by them: a request with
 * a per-token bucket once the day's count has reached the org's limit is `429 quota_exceeded`.
 */
export const API_REQUESTS_QUOTA = { dimension: 'api', name: 'API requests' } as const satisfies QuotaKey;
/**
 * Rate-limit groups an org over its daily API requests quota may still use (counted, never refused for
 * it): reading its own limits and quota usage, so a client refused for the quota can see why.
 */
export const API_QUOTA_EXEMPT_GROUPS: ReadonlySet<string> = new Set(['system.read']);
/** Counted by the platform from `identity.user.created`; enforced by identity when it creates a user. */
export const USERS_QUOTA = { dimension: 'api', name: 'Users' } as const satisfies QuotaKey;

/** Gauges other platform services report (`platform.usage.reported`): the current total of each. */
export const REPORTED_QUOTAS = [VCPU_QUOTA, INSTANCES_QUOTA, OBJECT_STORAGE_QUOTA, EGRESS_QUOTA] as const;

export const isQuota = (quota: { dimension: string; name: string }, key: QuotaKey): boolean =>
  quota.dimension === key.dimension && quota.name === key.name;

/** One quota of a plan: its key, unit and limit. */
export interface QuotaDefinition extends QuotaKey {
  unit: 'core' | 'count' | 'GB' | 'req/day';
  limit: number;
}

/** The standard plan's quotas (plan defaults live in code; orgs' overrides in the platform's database). */
export const STANDARD_QUOTAS: readonly QuotaDefinition[] = [
  { ...VCPU_QUOTA, unit: 'core', limit: 64 },
  { ...INSTANCES_QUOTA, unit: 'count', limit: 20 },
  { ...OBJECT_STORAGE_QUOTA, unit: 'GB', limit: 1024 },
  { ...EGRESS_QUOTA, unit: 'GB', limit: 500 },
  { ...API_REQUESTS_QUOTA, unit: 'req/day', limit: 100_000 },
  { ...USERS_QUOTA, unit: 'count', limit: 100 },
];
