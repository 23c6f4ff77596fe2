import { bucketCapacity, RATE_LIMIT_GROUPS, RateLimitTier, STANDARD_TIERS } from '@acct/limits';
import { DomainError, FieldError, validationFailed } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { RateLimitsRepository } from './rate-limits.repository';

/** Plan defaults live in code, versioned with the service; orgs' overrides in the database. */
const PLAN_TIERS: Record<string, readonly RateLimitTier[]> = { standard: STANDARD_TIERS };
export const DEFAULT_PLAN = 'standard';
/** The most a rate or a burst can be: both are stored and sent (platform.proto) as 32-bit integers. */
const MAX_TIER_VALUE = 2_147_483_647;
/**
 * The group whose requests never name an org (the token endpoint, the login page, revocation and
 * introspection authenticate a client or a user in their body, not with a bearer token): the gateway
 * holds them to the standard tier, so an org's override of it would be reported and never applied.
 */
const NO_ORG_GROUP = 'auth';
const isTierValue = (value: number) => Number.isInteger(value) && value >= 1 && value <= MAX_TIER_VALUE;

@Injectable()
export class RateLimitsService {
  constructor(private readonly repository: RateLimitsRepository) {}

  /** The tiers an org is held to: its plan's, each replaced by the org's override where it has one. */
  async tiersOf(orgId: string | undefined): Promise<RateLimitTier[]> {
    if (!orgId) return [...STANDARD_TIERS];
    const [plan, overrides] = await Promise.all([this.repository.planOf(orgId), this.repository.overridesOf(orgId)]);
    const byGroup = new Map(overrides.map((tier) => [tier.group, tier]));
    return (PLAN_TIERS[plan ?? DEFAULT_PLAN] ?? STANDARD_TIERS).map((tier) => byGroup.get(tier.group) ?? tier);
  }

  async setOverride(orgId: string, tier: RateLimitTier): Promise<void> {
    const errors: FieldError[] = [];
    if (!(RATE_LIMIT_GROUPS as readonly string[]).includes(tier.group)) {
      errors.push({ field: 'group', message: `must be one of ${RATE_LIMIT_GROUPS.join(', ')}` });
    } else if (tier.group === NO_ORG_GROUP) {
      errors.push({
        field: 'group',
        message: `${NO_ORG_GROUP} cannot be set per org: its requests carry no token that names an org`,
      });
    }
    if (!isTierValue(tier.ratePerMinute)) {
      errors.push({ field: 'rate_per_minute', message: `must be a positive integer up to ${MAX_TIER_VALUE}` });
    }
    if (!isTierValue(tier.burst)) {
      errors.push({ field: 'burst', message: `must be a positive integer up to ${MAX_TIER_VALUE}` });
    } else if (isTierValue(tier.ratePerMinute) && bucketCapacity(tier) < 1) {
      // A bucket that never holds a whole request refuses every request, whatever Retry-After says.
      errors.push({ field: 'burst', message: 'rate per second × burst must be at least 1 (one request)' });
    }
    if (tier.scope !== 'per-ip' && tier.scope !== 'per-token') {
      errors.push({ field: 'scope', message: 'must be per-ip or per-token' });
    }
    if (!orgId) throw new DomainError('validation_failed', 'An org id is required.');
    if (errors.length > 0) throw validationFailed(errors);
    await this.repository.setOverride(orgId, tier);
  }
}
