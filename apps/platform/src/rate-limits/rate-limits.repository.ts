import { RateLimitTier, TierScope } from '@acct/limits';
import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

@Injectable()
export class RateLimitsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async planOf(orgId: string): Promise<string | undefined> {
    return (await this.prisma.orgPlan.findUnique({ where: { orgId } }))?.plan;
  }

  async overridesOf(orgId: string): Promise<RateLimitTier[]> {
    const rows = await this.prisma.rateLimitOverride.findMany({ where: { orgId } });
    return rows.map((row) => ({
      group: row.group,
      ratePerMinute: row.ratePerMinute,
      burst: row.burst,
      scope: row.scope as TierScope,
    }));
  }

  async setOverride(orgId: string, tier: RateLimitTier): Promise<void> {
    const values = { ratePerMinute: tier.ratePerMinute, burst: tier.burst, scope: tier.scope };
    await this.prisma.rateLimitOverride.upsert({
      where: { orgId_group: { orgId, group: tier.group } },
      create: { orgId, group: tier.group, ...values },
      update: values,
    });
  }
}
