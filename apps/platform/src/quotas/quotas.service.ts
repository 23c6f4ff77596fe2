import { Caller, requireScope, SYSTEM_READ_SCOPE, USERS_WRITE_SCOPE } from '@acct/access-token';
import {
  API_REQUESTS_QUOTA,
  isQuota,
  isQuotaDimension,
  QUOTA_DIMENSIONS,
  QuotaDefinition,
  QuotaKey,
  STANDARD_QUOTAS,
  USERS_QUOTA,
} from '@acct/limits';
import { validationFailed } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { ApiUsageReader } from './api-usage.reader';
import { PLAN_QUOTAS } from './plan-quotas';
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

  /**
   * Interface §4.5 for the caller's own org; callers may read only their own org's quotas, with
   * `system:read`. One exception, stated here rather than hidden in the scope check: whoever may create
   * users (`users:write`) is held to the Users quota, so identity asks for it with that caller's token;
   * such a token without `system:read` sees that one quota and nothing else.
   */
  async quotasFor(caller: Caller, dimension: string, name = ''): Promise<{ orgId: string; quotas: QuotaEntry[] }> {
    const usersQuotaOnly = !caller.scopes.has(SYSTEM_READ_SCOPE) && caller.scopes.has(USERS_WRITE_SCOPE);
    if (!usersQuotaOnly) requireScope(caller, SYSTEM_READ_SCOPE);
    if (dimension && !isQuotaDimension(dimension)) {
      throw validationFailed([{ field: 'dimension', message: `must be one of ${QUOTA_DIMENSIONS.join(', ')}` }]);
    }
    const wanted = (quota: QuotaKey) =>
      (!dimension || quota.dimension === dimension) &&
      (!name || quota.name === name) &&
      (!usersQuotaOnly || isQuota(quota, USERS_QUOTA));
    return { orgId: caller.orgId, quotas: await this.quotasOf(caller.orgId, wanted) };
  }

  /** The org's quotas that `wanted` keeps; the day's API count (Redis) is read only when it is one. */
  private async quotasOf(orgId: string, wanted: (quota: QuotaKey) => boolean): Promise<QuotaEntry[]> {
    const [state, apiRequests] = await Promise.all([
      this.repository.stateOf(orgId),
      wanted(API_REQUESTS_QUOTA) ? this.apiUsage.today(orgId) : 0,
    ]);
    const key = (quota: { dimension: string; name: string }) => `${quota.dimension}/${quota.name}`;
    const limits = new Map(state.overrides.map((row) => [key(row), row.limit]));
    const used = new Map(state.usage.map((row) => [key(row), row.used]));
    used.set(key(API_REQUESTS_QUOTA), apiRequests);
    return (PLAN_QUOTAS[state.plan ?? 'standard'] ?? STANDARD_QUOTAS).filter(wanted).map((quota) => ({
      ...quota,
      limit: limits.get(key(quota)) ?? quota.limit,
      used: used.get(key(quota)) ?? 0,
    }));
  }
}
