import { Caller } from '@acct/access-token';
import { DomainError, validationFailed } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { ApiUsageReader } from './api-usage.reader';
import { PLAN_QUOTAS, QUOTA_DIMENSIONS, QuotaDefinition, STANDARD_QUOTAS } from './plan-quotas';
import { QuotasRepository } from './quotas.repository';

export interface QuotaEntry extends QuotaDefinition {
  used: number;
}

@Injectable()
export class QuotasService {
  constructor(
    private readonly repository: QuotasRepository,
    private readonly apiUsage: ApiUsageReader,
  ) {}

  /** Interface §4.5 for the caller's own org; callers may read only their own org's quotas. */
  async quotasFor(caller: Caller, dimension: string): Promise<{ orgId: string; quotas: QuotaEntry[] }> {
    if (!caller.scopes.has('system:read') && !caller.scopes.has('users:write')) {
      throw new DomainError('insufficient_scope', 'Reading quotas needs the scope system:read.');
    }
    if (dimension && !(QUOTA_DIMENSIONS as readonly string[]).includes(dimension)) {
      throw validationFailed([{ field: 'dimension', message: `must be one of ${QUOTA_DIMENSIONS.join(', ')}` }]);
    }
    const quotas = await this.quotasOf(caller.orgId);
    return {
      orgId: caller.orgId,
      quotas: dimension ? quotas.filter((quota) => quota.dimension === dimension) : quotas,
    };
  }

  async quotasOf(orgId: string): Promise<QuotaEntry[]> {
    const [plan, overrides, usage, apiRequests] = await Promise.all([
      this.repository.planOf(orgId),
      this.repository.overridesOf(orgId),
      this.repository.usageOf(orgId),
      this.apiUsage.today(orgId),
    ]);
    const key = (dimension: string, name: string) => `${dimension}/${name}`;
    const limits = new Map(overrides.map((row) => [key(row.dimension, row.name), row.limit]));
    const used = new Map(usage.map((row) => [key(row.dimension, row.name), row.used]));
    used.set(key('api', 'API requests'), apiRequests);
    return (PLAN_QUOTAS[plan ?? 'standard'] ?? STANDARD_QUOTAS).map((quota) => ({
      ...quota,
      limit: limits.get(key(quota.dimension, quota.name)) ?? quota.limit,
      used: used.get(key(quota.dimension, quota.name)) ?? 0,
    }));
  }
}
