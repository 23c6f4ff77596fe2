import { createEmptyDatabase, databaseUrl, dropDatabases, postgresServerUrl } from '@acct/testing';
import pg from 'pg';

import { pgAdapter, pgDatabase, statementNames } from './index';

describe('statementNames', () => {
  it('gives one text one name, every time, and two texts two names', () => {
    const names = statementNames();
    const first = names({ sql: 'SELECT 1' });
    expect(first).toMatch(/^s_[\w-]{22}$/);
    expect(names({ sql: 'SELECT 1' })).toBe(first);
    expect(statementNames()({ sql: 'SELECT 1' })).toBe(first);
    expect(names({ sql: 'SELECT 2' })).not.toBe(first);
  });

  it('names at most `limit` texts and sends any other unnamed (the empty name)', () => {
    const names = statementNames(2);
    const a = names({ sql: 'SELECT 1' });
    const b = names({ sql: 'SELECT 2' });
    expect(names({ sql: 'SELECT 3' })).toBe('');
    // The texts named before the limit keep their names.
    expect([names({ sql: 'SELECT 1' }), names({ sql: 'SELECT 2' })]).toEqual([a, b]);
  });
});

describe('pgAdapter against Postgres', () => {
  let adapter: Awaited<ReturnType<ReturnType<typeof pgAdapter>['connect']>> | undefined;
  afterEach(() => adapter?.dispose());

  const query = (sql: string, args: unknown[] = []) =>
    adapter!.queryRaw({
      sql,
      args,
      argTypes: args.map(() => ({ scalarType: 'int', arity: 'scalar' }) as never),
    });
  /** The statements prepared on the session, as the server lists them (the pool has one connection). */
  const prepared = async () =>
    (await query('SELECT statement FROM pg_prepared_statements ORDER BY statement')).rows.map(([text]) => text);

  it('prepares each statement once on a connection and runs it again by name', async () => {
    adapter = await pgAdapter(postgresServerUrl().toString(), { poolSize: 1 }).connect();
    for (const value of [1, 2, 3]) {
      const result = await query('SELECT $1::int + 1 AS next', [value]);
      expect(result.rows).toEqual([[value + 1]]);
    }
    const statements = await prepared();
    expect(statements.filter((text) => text === 'SELECT $1::int + 1 AS next')).toHaveLength(1);
  });

  it('prepares nothing when prepared statements are off', async () => {
    adapter = await pgAdapter(postgresServerUrl().toString(), { poolSize: 1, preparedStatements: false }).connect();
    expect((await query('SELECT $1::int + 1 AS next', [1])).rows).toEqual([[2]]);
    expect(await prepared()).toEqual([]);
  });
});

describe('pgDatabase: Prisma and direct statements on one pool', () => {
  let database: ReturnType<typeof pgDatabase> | undefined;
  let adapter: Awaited<ReturnType<ReturnType<typeof pgAdapter>['connect']>> | undefined;
  // Disposing the adapter ends the pool (disposeExternalPool).
  afterEach(() => adapter?.dispose());

  const open = async (preparedStatements: boolean) => {
    database = pgDatabase(postgresServerUrl().toString(), { poolSize: 1, preparedStatements });
    adapter = await database.adapter.connect();
  };
  const viaPrisma = (sql: string, args: unknown[]) =>
    adapter!.queryRaw({ sql, args, argTypes: args.map(() => ({ scalarType: 'int', arity: 'scalar' }) as never) });
  const prepared = async () =>
    (await database!.direct.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements', [])).map(
      (row) => row.statement,
    );

  it('runs a direct statement on the connection Prisma uses, prepared once under the name Prisma gives it', async () => {
    await open(true);
    const text = 'SELECT $1::int + 1 AS next';
    expect(await database!.direct.query<{ next: number }>(text, [1])).toEqual([{ next: 2 }]);
    expect((await viaPrisma(text, [2])).rows).toEqual([[3]]);
    expect(await database!.direct.query<{ next: number }>(text, [3])).toEqual([{ next: 4 }]);
    expect((await prepared()).filter((statement) => statement === text)).toHaveLength(1);
    // The connection is the one Prisma's statements ran on: the pool holds one.
    expect((await viaPrisma('SELECT pg_backend_pid() AS pid', [])).rows).toEqual(
      (await database!.direct.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', [])).map((row) => [row.pid]),
    );
  });

  it('reads rows as pg parses them: timestamptz as Date, text[] as an array, uuid as a string', async () => {
    await open(true);
    const [row] = await database!.direct.query<{ at: Date; list: string[]; id: string }>(
      `SELECT '2026-11-27T01:02:03.456Z'::timestamptz AS at, ARRAY['admin', 'viewer']::text[] AS list,
              '00000000-0000-4000-8000-000000000001'::uuid AS id`,
      [],
    );
    expect(row).toEqual({
      at: new Date('2026-11-27T01:02:03.456Z'),
      list: ['admin', 'viewer'],
      id: '00000000-0000-4000-8000-000000000001',
    });
  });

  it('prepares no direct statement when prepared statements are off', async () => {
    await open(false);
    expect(await database!.direct.query<{ next: number }>('SELECT $1::int + 1 AS next', [1])).toEqual([{ next: 2 }]);
    expect(await prepared()).toEqual([]);
  });
});

describe('pgDatabase on a database whose time zone is not UTC', () => {
  let name: string;
  let database: ReturnType<typeof pgDatabase> | undefined;
  let adapter: Awaited<ReturnType<ReturnType<typeof pgAdapter>['connect']>> | undefined;

  beforeAll(async () => {
    name = await createEmptyDatabase('time_zone');
    const admin = new pg.Client({ connectionString: databaseUrl(name) });
    await admin.connect();
    // A managed Postgres may well default to its region's zone.
    await admin.query(`ALTER DATABASE "${name}" SET timezone TO 'Asia/Tokyo'`);
    await admin.end();
  });
  afterAll(async () => {
    await adapter?.dispose();
    await dropDatabases([name]);
  });

  it("writes and reads a Date through Prisma's adapter as the same instant, and now() compares with it", async () => {
    database = pgDatabase(databaseUrl(name), { poolSize: 1 });
    adapter = await database.adapter.connect();
    const at = new Date('2026-01-02T03:04:05.678Z');
    const result = await adapter.queryRaw({
      sql: `SELECT $1::timestamptz AS at, (extract(epoch FROM $1::timestamptz) * 1000)::float8 AS ms,
              abs(extract(epoch FROM now() - $2::timestamptz)) < 60 AS near_now`,
      args: [at, new Date()],
      argTypes: [
        { scalarType: 'datetime', arity: 'scalar' },
        { scalarType: 'datetime', arity: 'scalar' },
      ] as never,
    });
    const [[read, ms, nearNow]] = result.rows;
    expect(ms).toBe(at.getTime());
    expect(new Date(read as string).getTime()).toBe(at.getTime());
    expect(nearNow).toBe(true);
    // Statements sent straight through pg agree.
    const [direct] = await database.direct.query<{ at: Date }>('SELECT $1::timestamptz AS at', [at]);
    expect(direct.at.getTime()).toBe(at.getTime());
  });
});
