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

  /**
   * The org's plan, its limit overrides and its usage, in one round trip: a user creation asks, so it is
   * a prepared statement without Prisma's runtime.
   */
  async stateOf(orgId: string): Promise<QuotaState> {
    const [row] = await this.prisma.direct.query<QuotaState>(STATE_OF, [orgId]);
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
    const [row] = await this.prisma.direct.query<{ applied: boolean }>(effect.statement, [
      eventId,
      type,
      ...effect.values,
    ]);
    return row.applied;
  }
}

const STATE_OF = `
  SELECT
    (SELECT plan FROM org_plans WHERE org_id = $1) AS plan,
    COALESCE((SELECT json_agg(json_build_object('dimension', dimension, 'name', name, 'limit', "limit"))
      FROM quota_overrides WHERE org_id = $1), '[]'::json) AS overrides,
    COALESCE((SELECT json_agg(json_build_object('dimension', dimension, 'name', name, 'used', used))
      FROM quota_usage WHERE org_id = $1), '[]'::json) AS usage`;

/**
 * What an event does to the usage: applyOnce's statement, an INSERT that runs beside the record of the
 * event's id ($1, its type $2) and only when that record is new (it selects from `processed`), with
 * its own values from $3 on. Each effect is one fixed text, so each is one prepared statement.
 */
export interface EventEffect {
  statement: string;
  values: unknown[];
}

const appliedOnce = (effectSql: string) => `
  WITH processed AS (
    INSERT INTO processed_events (event_id, type) VALUES ($1, $2)
    ON CONFLICT DO NOTHING RETURNING event_id
  ), effect AS (${effectSql})
  SELECT EXISTS (SELECT 1 FROM processed) AS applied`;

/** A reported gauge: the latest report (by occurred_at) wins, whatever order events arrive in. */
const SET_GAUGE = appliedOnce(`
  INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
  SELECT $3::text, $4::text, $5::text, $6::float8, $7::timestamptz
  WHERE EXISTS (SELECT 1 FROM processed)
  ON CONFLICT (org_id, dimension, name) DO UPDATE
    SET used = EXCLUDED.used, reported_at = EXCLUDED.reported_at
    WHERE quota_usage.reported_at <= EXCLUDED.reported_at`);

/** A counted quota (Users): one more. */
const INCREMENT = appliedOnce(`
  INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
  SELECT $3::text, $4::text, $5::text, 1, $6::timestamptz
  WHERE EXISTS (SELECT 1 FROM processed)
  ON CONFLICT (org_id, dimension, name) DO UPDATE
    SET used = quota_usage.used + 1, reported_at = GREATEST(quota_usage.reported_at, EXCLUDED.reported_at)`);

/** A counted quota (Users): one fewer, never below zero. */
const DECREMENT = appliedOnce(`
  INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
  SELECT $3::text, $4::text, $5::text, 0, $6::timestamptz
  WHERE EXISTS (SELECT 1 FROM processed)
  ON CONFLICT (org_id, dimension, name) DO UPDATE
    SET used = GREATEST(quota_usage.used - 1, 0),
        reported_at = GREATEST(quota_usage.reported_at, EXCLUDED.reported_at)`);

export const setGauge = (orgId: string, dimension: string, name: string, used: number, at: Date): EventEffect => ({
  statement: SET_GAUGE,
  values: [orgId, dimension, name, used, at],
});

export const increment = (orgId: string, dimension: string, name: string, at: Date): EventEffect => ({
  statement: INCREMENT,
  values: [orgId, dimension, name, at],
});

export const decrement = (orgId: string, dimension: string, name: string, at: Date): EventEffect => ({
  statement: DECREMENT,
  values: [orgId, dimension, name, at],
});
