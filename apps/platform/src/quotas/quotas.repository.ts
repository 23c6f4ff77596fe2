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
   * (one of `setGauge`, `userCreated`, `userDeleted` below), which runs only when the id was new, so a
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

  /**
   * Forgets up to `batch` event ids applied at or before `before` (the index on `processed_at`);
   * answers how many.
   */
  async pruneProcessed(before: Date, batch: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM processed_events WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM processed_events WHERE processed_at <= ${before} LIMIT ${batch}))`;
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
 * What an event does to the usage: applyOnce's statement, whose writes run beside the record of the
 * event's id ($1, its type $2) and only when that record is new (they select from `processed`), with
 * its own values from $3 on. Each effect is one fixed text, so each is one prepared statement.
 */
export interface EventEffect {
  statement: string;
  values: unknown[];
}

/**
 * The statement of an effect: `effectSql` changes the usage; `steps` (`name AS (...)`) are written
 * between the two and it may read them (a data-modifying WITH is allowed at the top level only).
 */
const appliedOnce = (effectSql: string, ...steps: string[]) => `
  WITH processed AS (
    INSERT INTO processed_events (event_id, type) VALUES ($1, $2)
    ON CONFLICT DO NOTHING RETURNING event_id
  ),${steps.map((step) => ` ${step},`).join('')} effect AS (${effectSql})
  SELECT EXISTS (SELECT 1 FROM processed) AS applied`;

/**
 * A reported gauge: the latest report (by occurred_at) wins, whatever order events arrive in. A report
 * stamped later than the database's clock (a publisher whose clock is ahead, a wrong stamp) counts as
 * reported now: kept as stamped, it outranked every later report until that moment came, so one stamp
 * a year ahead froze the gauge for a year.
 */
const SET_GAUGE = appliedOnce(`
  INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
  SELECT $3::text, $4::text, $5::text, $6::float8, LEAST($7::timestamptz, clock_timestamp())
  WHERE EXISTS (SELECT 1 FROM processed)
  ON CONFLICT (org_id, dimension, name) DO UPDATE
    SET used = EXCLUDED.used, reported_at = EXCLUDED.reported_at
    WHERE quota_usage.reported_at <= EXCLUDED.reported_at`);

/*
 * A counted quota (Users), from the user's creation and deletion in either order: `counted_users`
 * keeps, per user, which of the two were applied, and each statement flips its own flag only when it
 * was not set yet (`marked` is then the user's row, else empty). The usage changes by that flip and
 * the other flag: a creation counts one more unless the deletion came first, a deletion one fewer
 * only when the creation came first. Two replicas applying both at once take turns on the user's row
 * (ON CONFLICT locks it), so the second sees the first's flag.
 */

/**
 * The statement of a user's `mark` (its creation or deletion) on a counted quota, by `delta`: the
 * usage changes (never below zero) when the mark is new and `counts` (SQL on `marked`, the user's row
 * returning the other mark) holds.
 */
function countedUser(mark: 'created' | 'deleted', delta: 1 | -1, counts: string): string {
  const other = mark === 'created' ? 'deleted' : 'created';
  return appliedOnce(
    `
  INSERT INTO quota_usage (org_id, dimension, name, used, reported_at)
  SELECT $3::text, $5::text, $6::text, ${Math.max(delta, 0)}, $7::timestamptz
  WHERE EXISTS (SELECT 1 FROM marked WHERE ${counts})
  ON CONFLICT (org_id, dimension, name) DO UPDATE
    SET used = GREATEST(quota_usage.used + (${delta}), 0),
        reported_at = GREATEST(quota_usage.reported_at, EXCLUDED.reported_at)`,
    `marked AS (
    INSERT INTO counted_users (user_id, org_id, ${mark})
    SELECT $4::text, $3::text, true WHERE EXISTS (SELECT 1 FROM processed)
    ON CONFLICT (user_id) DO UPDATE SET ${mark} = true WHERE NOT counted_users.${mark}
    RETURNING ${other}
  )`,
  );
}

/** One more, unless the user was counted already or its deletion came first. */
const COUNT_USER_CREATED = countedUser('created', 1, 'NOT marked.deleted');

/** One fewer, once, and only for a user whose creation was counted (a deletion that comes first leaves its mark). */
const COUNT_USER_DELETED = countedUser('deleted', -1, 'marked.created');

/**
 * A reported gauge's new value; `at` is the event's `occurred_at` as sent (a `Date` keeps milliseconds
 * only, and two reports within one millisecond would tie: the one arriving last won).
 */
export const setGauge = (orgId: string, dimension: string, name: string, used: number, at: string): EventEffect => ({
  statement: SET_GAUGE,
  values: [orgId, dimension, name, used, at],
});

/** The user's creation, for the org's counted quota `dimension`/`name`. */
export const userCreated = (orgId: string, userId: string, dimension: string, name: string, at: Date): EventEffect => ({
  statement: COUNT_USER_CREATED,
  values: [orgId, userId, dimension, name, at],
});

/** The user's deletion, for the org's counted quota `dimension`/`name`. */
export const userDeleted = (orgId: string, userId: string, dimension: string, name: string, at: Date): EventEffect => ({
  statement: COUNT_USER_DELETED,
  values: [orgId, userId, dimension, name, at],
});
