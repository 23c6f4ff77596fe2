import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
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
   * Applies one event exactly once, in one statement: its id is recorded together with its effect
   * (one of `setGauge`, `increment`, `decrement` below), which runs only when the id was new, so a
   * redelivery changes nothing; a concurrent delivery of the same id waits for the first and then
   * finds it. Answers false for a duplicate.
   */
  async applyOnce(eventId: string, type: string, effect: EventEffect): Promise<boolean> {
    const [row] = await this.prisma.$queryRaw<Array<{ applied: boolean }>>`
      WITH processed AS (
        INSERT INTO processed_events (event_id, type) VALUES (${eventId}, ${type})
        ON CONFLICT DO NOTHING RETURNING event_id
      ), effect AS (${effect.sql})
      SELECT EXISTS (SELECT 1 FROM processed) AS applied`;
    return row.applied;
  }
}

/**
 * What an event does to the usage: an INSERT that applyOnce runs beside the record of the event's id,
 * and only when that record is new (it selects from applyOnce's `processed`).
 */
export interface EventEffect {
  sql: Prisma.Sql;
}

const effect = (sql: Prisma.Sql): EventEffect => ({ sql });

/** A reported gauge: the latest report (by occurred_at) wins, whatever order events arrive in. */
export const setGauge = (orgId: string, dimension: string, name: string, used: number, at: Date) =>
  effect(Prisma.sql`
    INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
    SELECT ${orgId}::text, ${dimension}::text, ${name}::text, ${used}::float8, ${at}::timestamptz
    WHERE EXISTS (SELECT 1 FROM processed)
    ON CONFLICT (org_id, dimension, name) DO UPDATE
      SET used = EXCLUDED.used, reported_at = EXCLUDED.reported_at
      WHERE quota_usage.reported_at <= EXCLUDED.reported_at`);

/** A counted quota (Users): one more. */
export const increment = (orgId: string, dimension: string, name: string, at: Date) =>
  effect(Prisma.sql`
    INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
    SELECT ${orgId}::text, ${dimension}::text, ${name}::text, 1, ${at}::timestamptz
    WHERE EXISTS (SELECT 1 FROM processed)
    ON CONFLICT (org_id, dimension, name) DO UPDATE
      SET used = quota_usage.used + 1, reported_at = GREATEST(quota_usage.reported_at, EXCLUDED.reported_at)`);

/** A counted quota (Users): one fewer, never below zero. */
export const decrement = (orgId: string, dimension: string, name: string, at: Date) =>
  effect(Prisma.sql`
    INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
    SELECT ${orgId}::text, ${dimension}::text, ${name}::text, 0, ${at}::timestamptz
    WHERE EXISTS (SELECT 1 FROM processed)
    ON CONFLICT (org_id, dimension, name) DO UPDATE
      SET used = GREATEST(quota_usage.used - 1, 0),
          reported_at = GREATEST(quota_usage.reported_at, EXCLUDED.reported_at)`);
