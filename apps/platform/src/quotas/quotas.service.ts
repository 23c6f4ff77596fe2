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
import { QuotasRepository, QuotaState } from './quotas.repository';

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

  /** The org's limit of one quota (its override, else its plan's); for the gateways' daily API quota. */
  async limitOf(orgId: string, wanted: QuotaKey): Promise<number> {
    const quota = limitsOf(await this.repository.stateOf(orgId)).find((candidate) => isQuota(candidate, wanted));
    return quota?.limit ?? 0;
  }

  /** The org's quotas that `wanted` keeps; the day's API count (Redis) is read only when it is one. */
  private async quotasOf(orgId: string, wanted: (quota: QuotaKey) => boolean): Promise<QuotaEntry[]> {
    const [state, apiRequests] = await Promise.all([
      this.repository.stateOf(orgId),
      wanted(API_REQUESTS_QUOTA) ? this.apiUsage.today(orgId) : 0,
    ]);
    const used = new Map(state.usage.map((row) => [keyOf(row), row.used]));
    used.set(keyOf(API_REQUESTS_QUOTA), apiRequests);
    return limitsOf(state)
      .filter(wanted)
      .map((quota) => ({ ...quota, used: used.get(keyOf(quota)) ?? 0 }));
  }
}

const keyOf = (quota: QuotaKey | { dimension: string; name: string }) => `${quota.dimension}/${quota.name}`;

/** The quotas of the org's plan, each with the org's own limit where it has one. */
function limitsOf(state: QuotaState): QuotaDefinition[] {
  const limits = new Map(state.overrides.map((row) => [keyOf(row), row.limit]));
  return (PLAN_QUOTAS[state.plan ?? 'standard'] ?? STANDARD_QUOTAS).map((quota) => ({
    ...quota,
    limit: limits.get(keyOf(quota)) ?? quota.limit,
  }));
}
