/** What a limit is counted against (interface §2.4). */
export type TierScope = 'per-ip' | 'per-token';

export interface RateLimitTier {
  group: string;
  ratePerMinute: number;
  burst: number;
  scope: TierScope;
}

/** Endpoint groups (contract §2); `default` covers every path outside the named groups. */
export const RATE_LIMIT_GROUPS = [
  'auth',
  'users.read',
  'users.write',
  'system.read',
  'system.health',
  'compute.write',
  'metrics.query',
  'default',
] as const;
export type RateLimitGroup = (typeof RATE_LIMIT_GROUPS)[number];

/** The group of the token endpoint and the other OAuth endpoints (contract §2, §6): their errors carry RFC 6749's members. */
export const OAUTH_GROUP: RateLimitGroup = 'auth';

/**
 * The `standard` plan's tiers: interface §4.4's four, contract §2's users.write, system.read and
 * system.health, and `default` for anything else (unknown paths, JWKS, the activation page).
 */
export const STANDARD_TIERS: readonly RateLimitTier[] = [
  { group: 'auth', ratePerMinute: 10, burst: 20, scope: 'per-ip' },
  { group: 'users.read', ratePerMinute: 300, burst: 60, scope: 'per-token' },
  { group: 'users.write', ratePerMinute: 60, burst: 10, scope: 'per-token' },
  { group: 'system.read', ratePerMinute: 120, burst: 10, scope: 'per-token' },
  { group: 'system.health', ratePerMinute: 600, burst: 10, scope: 'per-ip' },
  { group: 'compute.write', ratePerMinute: 60, burst: 10, scope: 'per-token' },
  { group: 'metrics.query', ratePerMinute: 60, burst: 5, scope: 'per-token' },
  { group: 'default', ratePerMinute: 300, burst: 10, scope: 'per-ip' },
];

/**
 * Interface §2.4: the bucket holds (rate per second) × burst tokens. Multiplied before it is divided,
 * so a whole number of requests is exactly that number ((11 / 60) × 300 would be 54.99999999999999).
 */
export const bucketCapacity = (tier: Pick<RateLimitTier, 'ratePerMinute' | 'burst'>) =>
  (tier.ratePerMinute * tier.burst) / 60;

export const RATE_LIMIT_NOTICE =
  'Each endpoint group is limited by a token bucket holding (rate per second) × burst requests, refilled ' +
  'continuously at the rate. A request over the limit is answered with HTTP 429 and a Retry-After header ' +
  'giving the seconds until it may be retried.';

/**
 * The Redis key counting an org's API requests on one UTC day: the gateways increment it, the
 * platform reads it for the "API requests" quota.
 */
export const apiUsageKey = (orgId: string, epochMs: number) => `usage:api:{${orgId}}:${utcDate(epochMs)}`;

const DAY_MS = 86_400_000;
/** The UTC day utcDate answered last (a gateway asks for it on every authenticated request). */
let lastDay = { start: 0, end: 0, date: '' };

/** `YYYY-MM-DD` of the UTC day `epochMs` falls in. */
export function utcDate(epochMs: number): string {
  if (epochMs < lastDay.start || epochMs >= lastDay.end) {
    const start = Math.floor(epochMs / DAY_MS) * DAY_MS;
    lastDay = { start, end: start + DAY_MS, date: new Date(start).toISOString().slice(0, 10) };
  }
  return lastDay.date;
}

/** Whole seconds (at least 1) from `epochMs` to the next UTC midnight, when the day's API count starts again. */
export const secondsUntilUtcMidnight = (epochMs: number) =>
  Math.max(1, Math.ceil((DAY_MS - (epochMs % DAY_MS)) / 1000));
