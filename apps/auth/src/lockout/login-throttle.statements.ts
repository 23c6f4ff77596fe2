/*
 * The statements of a password login's brute-force limits (contract §4), sent without Prisma's runtime
 * as prepared statements (`PrismaService.direct`): a login makes two round trips for them, one before
 * the password check and one after a success.
 *
 * Lock order: every statement that locks a (username, IP) pair's row and the account's budget row
 * locks the pair first (the budget's statement reads the pair's result, which runs the pair's
 * statement first), as `LockoutReset` does, so two logins of one account never wait for each other
 * in a cycle.
 */

/**
 * The attempts of the pair's row that still count towards a lock at $3 (now): those made within the
 * last $4 seconds, oldest first (the window slides with them: five failures within any 15 minutes lock
 * the pair, also across the end of the window the first one began); none once a lock ended (the pair
 * starts afresh then).
 */
const COUNTED_ATTEMPTS = `(CASE WHEN login_throttles.locked_until IS NOT NULL THEN '{}'::timestamptz[] ELSE ARRAY(
    SELECT at FROM unnest(login_throttles.attempt_times) AS at
    WHERE at > $3::timestamptz - make_interval(secs => $4::float8) ORDER BY at) END)`;

/** The pair's lock holds at $3 (now). */
const PAIR_LOCKED = `login_throttles.locked_until > $3::timestamptz`;

/**
 * Counts one attempt of the pair ($1 username, $2 client key) with one atomic upsert (concurrent
 * attempts queue on the row), made at $3 (now): its time joins those still counted (COUNTED_ATTEMPTS,
 * $4 seconds), and more attempts are counted while locked. The attempt that makes $5 within the window
 * sets the lock ($6 seconds from it, so from the failure that earned it, however long the next attempt
 * waits); it is only armed: the pair refuses the attempts after it while it lasts (`attempts` past $5),
 * and a success clears it. Answers `attempts`, `locked_until` and `window_started_at` (the oldest
 * attempt counted); a give-back finds the attempt's slot by its time, $3 (GIVE_BACK).
 */
export const TAKE_PAIR_SLOT = `
  INSERT INTO login_throttles (username, client_ip, attempts, window_started_at, locked_until, attempt_times)
  VALUES ($1, $2, 1, $3::timestamptz, NULL, ARRAY[$3::timestamptz])
  ON CONFLICT (username, client_ip) DO UPDATE SET
    attempts = CASE
      WHEN ${PAIR_LOCKED} THEN login_throttles.attempts + 1
      ELSE cardinality(${COUNTED_ATTEMPTS}) + 1 END,
    window_started_at = CASE
      WHEN ${PAIR_LOCKED} THEN login_throttles.window_started_at
      ELSE coalesce(${COUNTED_ATTEMPTS}[1], $3::timestamptz) END,
    locked_until = CASE
      WHEN ${PAIR_LOCKED} THEN login_throttles.locked_until
      WHEN cardinality(${COUNTED_ATTEMPTS}) + 1 >= $5::int THEN $3::timestamptz + make_interval(secs => $6::float8)
      ELSE NULL END,
    attempt_times = CASE
      WHEN ${PAIR_LOCKED} THEN login_throttles.attempt_times
      ELSE ${COUNTED_ATTEMPTS} || $3::timestamptz END
  RETURNING attempts, locked_until, window_started_at`;

/** Forgets the pair's attempts ($1 username, $2 client key). */
export const CLEAR_PAIR = `DELETE FROM login_throttles WHERE username = $1 AND client_ip = $2`;

/**
 * Steps 1 and 2 of a login in one statement (one round trip, one transaction): takes the pair's slot
 * (TAKE_PAIR_SLOT, $1–$6); unless the pair is locked, or the source is exempt ($7: a valid device
 * credential; or the client key $2 logged in to the account after $8), takes one slot of the account's
 * budget with one atomic upsert (never more than $9 taken in a window of $10 seconds; past them the
 * attempt is counted as refused). Answers the pair's `attempts`, `locked_until` and `window_started_at`,
 * `exempt`, and the budget's `failures`, `refused` and `budget_window_started_at` (null when no slot
 * was taken).
 */
export const ADMIT = `
  WITH pair AS (${TAKE_PAIR_SLOT}
  ), source AS (
    SELECT $7::boolean OR EXISTS (
      SELECT 1 FROM known_login_sources
      WHERE username = $1 AND kind = 'ip' AND value = $2 AND $2 <> '' AND last_seen_at > $8::timestamptz
    ) AS exempt
  ), budget AS (
    INSERT INTO login_account_throttles (username, failures, window_started_at, refused)
    SELECT $1, 1, $3::timestamptz, 0
    WHERE NOT (SELECT exempt FROM source)
      AND NOT EXISTS (SELECT 1 FROM pair WHERE attempts > $5::int AND locked_until > $3::timestamptz)
    ON CONFLICT (username) DO UPDATE SET
      failures = CASE
        WHEN login_account_throttles.window_started_at <= $3::timestamptz - make_interval(secs => $10::float8) THEN 1
        WHEN login_account_throttles.failures < $9::int THEN login_account_throttles.failures + 1
        ELSE login_account_throttles.failures END,
      refused = CASE
        WHEN login_account_throttles.window_started_at <= $3::timestamptz - make_interval(secs => $10::float8) THEN 0
        WHEN login_account_throttles.failures < $9::int THEN login_account_throttles.refused
        ELSE login_account_throttles.refused + 1 END,
      window_started_at = CASE
        WHEN login_account_throttles.window_started_at <= $3::timestamptz - make_interval(secs => $10::float8)
          THEN $3::timestamptz
        ELSE login_account_throttles.window_started_at END
    RETURNING failures, refused, window_started_at
  )
  SELECT pair.attempts, pair.locked_until, pair.window_started_at, source.exempt, budget.failures, budget.refused,
         budget.window_started_at AS budget_window_started_at
  FROM pair CROSS JOIN source LEFT JOIN budget ON true`;

/**
 * Step 6 of a login in one statement (one round trip, one transaction): frees the pair ($1 username,
 * $2 client key); when there is a client key, records it as a known source at $3 (or refreshes its
 * `last_seen_at`; a source last seen at or before $4 starts anew) and forgets the account's other
 * sources that no longer count (last seen at or before $4, or of another kind than `ip`); and, when the
 * attempt took a slot of the budget ($5: the start of the window it took it in; null when it took
 * none), gives it back while nothing of that window was refused. Only to that window: once another
 * attempt has started the next one, the slot went with the old, and giving it to the new one would
 * allow a failure more there (101 in the hour). The sub-statements see one snapshot, so none may touch
 * a row another changes: the pruning leaves the recorded source to the upsert. `given_back` reads
 * `cleared` only to run after it: without that, Postgres updated the budget's row before it deleted
 * the pair's (login-throttle.integration.spec.ts).
 */
export const RECORD_SUCCESS = `
  WITH cleared AS (
    DELETE FROM login_throttles WHERE username = $1 AND client_ip = $2 RETURNING 1
  ), pruned AS (
    DELETE FROM known_login_sources
    WHERE $2 <> '' AND username = $1 AND (kind <> 'ip' OR last_seen_at <= $4::timestamptz)
      AND NOT (kind = 'ip' AND value = $2)
  ), remembered AS (
    INSERT INTO known_login_sources (username, kind, value, first_seen_at, last_seen_at)
    SELECT $1, 'ip', $2, $3::timestamptz, $3::timestamptz WHERE $2 <> ''
    ON CONFLICT (username, kind, value) DO UPDATE SET
      last_seen_at = EXCLUDED.last_seen_at,
      first_seen_at = CASE WHEN known_login_sources.last_seen_at <= $4::timestamptz
        THEN EXCLUDED.first_seen_at ELSE known_login_sources.first_seen_at END
  ), given_back AS (
    UPDATE login_account_throttles SET failures = failures - 1
    WHERE username = $1 AND window_started_at = $5::timestamptz AND refused = 0 AND failures > 0
      AND (SELECT count(*) FROM cleared) >= 0
  )
  SELECT 1`;

/**
 * Gives back the slots of an attempt whose password was never checked ($1 username, $2 client key;
 * identity did not answer): the pair's attempt while the pair refused none ($4 attempts at most; the
 * lock the last of them armed goes with it) and still holds it (its time, $5, among the attempts the
 * pair counts: a pair a lock's end or a success started afresh holds none of its attempts, and taking
 * one off would let it check a sixth password), and the budget's slot
 * when the attempt took one ($3: the start of the window it took it in, as RECORD_SUCCESS's $5; null
 * for a check that has no budget, as the MFA settings') while nothing of that window was refused.
 * Locks the pair's row before the budget's, as RECORD_SUCCESS does (`given_back` reads `pair` only to
 * run after it).
 */
export const GIVE_BACK = `
  WITH pair AS (
    UPDATE login_throttles SET attempts = attempts - 1, locked_until = NULL,
      attempt_times = attempt_times[:array_position(attempt_times, $5::timestamptz) - 1]
        || attempt_times[array_position(attempt_times, $5::timestamptz) + 1:]
    WHERE username = $1 AND client_ip = $2 AND $5::timestamptz = ANY(attempt_times) AND attempts > 0
      AND (locked_until IS NULL OR attempts <= $4::int)
    RETURNING 1
  ), given_back AS (
    UPDATE login_account_throttles SET failures = failures - 1
    WHERE username = $1 AND window_started_at = $3::timestamptz AND refused = 0 AND failures > 0
      AND (SELECT count(*) FROM pair) >= 0
  )
  SELECT 1`;
