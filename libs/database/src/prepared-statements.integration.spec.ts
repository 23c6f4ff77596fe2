import { postgresServerUrl } from '@acct/testing';

import { pgAdapter, statementNames } from './index';

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
