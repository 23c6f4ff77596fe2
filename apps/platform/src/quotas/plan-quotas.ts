import { QuotaDefinition, STANDARD_QUOTAS } from '@acct/limits';

/** Each plan's quotas by plan name. */
export const PLAN_QUOTAS: Record<string, readonly QuotaDefinition[]> = { standard: STANDARD_QUOTAS };
