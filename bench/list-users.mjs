#!/usr/bin/env node
// Issue 14 item 6: how long identity's ListUsers query takes on an org of 100,000 users.
//
//   node bench/list-users.mjs            # BENCH_USERS=100000 BENCH_ROUNDS=50
//
// Creates a throw-away database on TEST_POSTGRES_URL (default: the local server), applies identity's
// real migrations, seeds the users with one INSERT … SELECT generate_series, then times the exact
// query `UsersRepository.listInOrg` sends (first page, a page deep in the list, a q filter), unnamed and
// as the prepared statement the service sends, and prints the prepared statement's plan. Writes
// bench/results/list-users.md and drops the database.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import pg from 'pg';

const root = path.resolve(import.meta.dirname, '..');
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const PAGE = 100;
const server = new URL(process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
const name = `identity_bench_${randomBytes(4).toString('hex')}`;
const url = new URL(server);
url.pathname = `/${name}`;

/**
 * The query of UsersRepository.listInOrg as it composes it: one text per combination of the optional
 * conditions (cursor, q), each a statement the service prepares once per connection.
 */
const listQuery = ({ cursor, q }) => {
  const conditions = ['org_id = $1::uuid'];
  let next = 2;
  if (cursor) {
    conditions.push(`(created_at, id) < ($${next}::timestamptz, $${next + 1}::uuid)`);
    next += 2;
  }
  if (q) {
    conditions.push(`(email_normalized LIKE $${next} OR display_name ILIKE $${next + 1})`);
    next += 2;
  }
  return `
  SELECT id, org_id AS "orgId", email, email_normalized AS "emailNormalized", phone,
         display_name AS "displayName", status, roles, locale, timezone,
         created_at AS "createdAt", activated_at AS "activatedAt"
  FROM users
  WHERE ${conditions.join(' AND ')}
  ORDER BY created_at DESC, id DESC
  LIMIT $${next}`;
};

/**
 * Unmeasured runs of a prepared statement first, so Postgres has settled on its plan: after five it
 * compares a generic plan with the custom ones it made (`plan_cache_mode` auto).
 */
const PREPARED_WARM_UP = 10;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p99 = (values) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))];

async function main() {
  execFileSync(process.execPath, [path.join(root, 'tools/prisma.mjs'), 'deploy', 'identity'], {
    cwd: root,
    env: { ...process.env, IDENTITY_DATABASE_URL: url.toString() },
    stdio: 'ignore',
  });
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    const orgId = '00000000-0000-4000-8000-000000000001';
    await db.query(`INSERT INTO orgs (id, name) VALUES ($1, 'bench')`, [orgId]);
    const seeded = performance.now();
    await db.query(
      `INSERT INTO users (id, org_id, email, email_normalized, display_name, status, roles, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'user' || n || '@bench.test', 'user' || n || '@bench.test', 'User ' || n,
              CASE WHEN n % 10 = 0 THEN 'disabled' ELSE 'active' END, ARRAY['member'],
              now() - make_interval(secs => n), now()
       FROM generate_series(1, $2::int) AS n`,
      [orgId, USERS],
    );
    await db.query('ANALYZE users');
    const seedMs = performance.now() - seeded;

    const deep = await db.query(
      `SELECT created_at, id FROM users WHERE org_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
      [orgId, Math.floor(USERS * 0.9)],
    );
    const cases = [
      ['first page', {}, [orgId, PAGE + 1]],
      [
        'page at 90% of the list (cursor)',
        { cursor: true },
        [orgId, deep.rows[0].created_at, deep.rows[0].id, PAGE + 1],
      ],
      ['first page, q = "user12"', { q: true }, [orgId, 'user12%', '%user12%', PAGE + 1]],
    ];
    const time = async (label, query) => {
      const times = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const started = performance.now();
        const result = await db.query(query);
        times.push(performance.now() - started);
        if (result.rowCount !== PAGE + 1) throw new Error(`${label}: ${result.rowCount} rows`);
      }
      return times;
    };
    const rows = [];
    for (const [label, shape, params] of cases) {
      const text = listQuery(shape);
      const unnamed = await time(label, { text, values: params });
      // As the services send it: a named statement (libs/database statementNames), parsed once.
      const name = `list_${rows.length}`;
      for (let round = 0; round < PREPARED_WARM_UP; round += 1) await db.query({ name, text, values: params });
      const prepared = await time(label, { name, text, values: params });
      const literals = params.map((value) =>
        db.escapeLiteral(value instanceof Date ? value.toISOString() : String(value)),
      );
      const plan = await db.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE ${name}(${literals.join(', ')})`);
      rows.push({
        label,
        median: median(unnamed),
        p99: p99(unnamed),
        preparedMedian: median(prepared),
        preparedP99: p99(prepared),
        plan: plan.rows.map((row) => row['QUERY PLAN']),
      });
    }

    const lines = [
      `# ListUsers on an org of ${USERS.toLocaleString('en')} users`,
      '',
      `\`node bench/list-users.mjs\` on ${new Date().toISOString()}: ${ROUNDS} runs of each query (pg, one`,
      `connection, page of ${PAGE} + 1 to tell whether a next page exists), sent unnamed and as the named`,
      `statement the service prepares (after ${PREPARED_WARM_UP} unmeasured runs, so Postgres has chosen between a generic`,
      `and a custom plan); seeding took ${(seedMs / 1000).toFixed(1)} s. The plans are the prepared statement's.`,
      '',
      '| query | median ms | p99 ms | prepared: median ms | prepared: p99 ms |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows.map(
        (row) =>
          `| ${row.label} | ${row.median.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.preparedMedian.toFixed(2)} | ${row.preparedP99.toFixed(2)} |`,
      ),
      '',
      ...rows.flatMap((row) => [`## ${row.label}`, '', '```', ...row.plan, '```', '']),
    ];
    writeFileSync(path.join(root, 'bench/results/list-users.md'), lines.join('\n'));
    process.stdout.write(lines.slice(0, 11 + rows.length).join('\n') + '\n');
  } finally {
    await db.end();
    const admin = new pg.Client({ connectionString: server.toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

await main();
