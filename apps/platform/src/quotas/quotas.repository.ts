import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

export interface UsageRow {
  dimension: string;
  name: string;
  used: number;
}

/** What an org's quotas are made of: its plan (null: standard), its own limits, its usage. */
export interface QuotaState {
  plan: string | null;
  overrides: Array<{ dimension: string; name: string; limit: number }>;
  usage: UsageRow[];
}

@Injectable()
export class QuotasRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The org's plan, its limit overrides and its usage, in one round trip. */
  async stateOf(orgId: string): Promise<QuotaState> {
    const [row] = await this.prisma.$queryRaw<QuotaState[]>`
      SELECT
        (SELECT plan FROM org_plans WHERE org_id = ${orgId}) AS plan,
        COALESCE((SELECT json_agg(json_build_object('dimension', dimension, 'name', name, 'limit', "limit"))
          FROM quota_overrides WHERE org_id = ${orgId}), '[]'::json) AS overrides,
        COALESCE((SELECT json_agg(json_build_object('dimension', dimension, 'name', name, 'used', used))
          FROM quota_usage WHERE org_id = ${orgId}), '[]'::json) AS usage`;
    return row;
  }

  async setOverride(orgId: string, dimension: string, name: string, limit: number) {
    await this.prisma.quotaOverride.upsert({
      where: { orgId_dimension_name: { orgId, dimension, name } },
      create: { orgId, dimension, name, limit },
      update: { limit },
    });
  }

  /**
   * Applies one event exactly once: its id is recorded in the same transaction as its effect, so a
   * redelivery finds the id and changes nothing. Answers false for a duplicate.
   */
  async applyOnce(eventId: string, type: string, apply: (tx: Transaction) => Promise<unknown>): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const inserted = await tx.$executeRaw`
        INSERT INTO processed_events (event_id, type) VALUES (${eventId}, ${type}) ON CONFLICT DO NOTHING`;
      if (inserted === 0) return false;
      await apply(tx);
      return true;
    });
  }
}

export type Transaction = Parameters<Parameters<PrismaService['$transaction']>[0]>[0];

/** A reported gauge: the latest report (by occurred_at) wins, whatever order events arrive in. */
export async function setGauge(
  tx: Transaction,
  orgId: string,
  dimension: string,
  name: string,
  used: number,
  at: Date,
) {
  await tx.$executeRaw`
    INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
    VALUES (${orgId}, ${dimension}, ${name}, ${used}, ${at})
    ON CONFLICT (org_id, dimension, name) DO UPDATE
      SET used = EXCLUDED.used, reported_at = EXCLUDED.reported_at
      WHERE quota_usage.reported_at <= EXCLUDED.reported_at`;
}

/** A counted quota (Users): one more. */
export async function increment(tx: Transaction, orgId: string, dimension: string, name: string, at: Date) {
  await tx.$executeRaw`
    INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
    VALUES (${orgId}, ${dimension}, ${name}, 1, ${at})
    ON CONFLICT (org_id, dimension, name) DO UPDATE
      SET used = quota_usage.used + 1, reported_at = GREATEST(quota_usage.reported_at, EXCLUDED.reported_at)`;
}

/** A counted quota (Users): one fewer, never below zero. */
export async function decrement(tx: Transaction, orgId: string, dimension: string, name: string, at: Date) {
  await tx.$executeRaw`
    INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
    VALUES (${orgId}, ${dimension}, ${name}, 0, ${at})
    ON CONFLICT (org_id, dimension, name) DO UPDATE
      SET used = GREATEST(quota_usage.used - 1, 0),
          reported_at = GREATEST(quota_usage.reported_at, EXCLUDED.reported_at)`;
}
