// Configuration for Prisma 6.19's CLI, which runs `migrate diff` and `migrate deploy` on its WASM
// schema engine through a driver adapter, with no Rust engine to download. Used by tools/prisma.mjs.
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { parse } from 'pg-connection-string';
import { defineConfig } from 'prisma-migrate/config';

type Adapter = Awaited<ReturnType<PrismaPg['connect']>>;
type PerformIO = (query: unknown) => Promise<pg.QueryResult | pg.QueryResult[]>;

const PG_CHAR = 18;
const PG_TEXT = 25;

/**
 * The adapter cannot read Postgres' internal one-byte `"char"` type, which the schema engine's
 * catalogue queries return (`pg_constraint.contype`, …); it is text, so read it as text.
 */
function readCharAsText(adapter: Adapter): Adapter {
  const target = adapter as unknown as { performIO: PerformIO };
  const performIO = target.performIO.bind(adapter);
  target.performIO = async (query) => {
    const result = await performIO(query);
    // A multi-statement script answers with one result per statement.
    for (const { fields } of [result].flat()) {
      for (const field of fields ?? []) if (field.dataTypeID === PG_CHAR) field.dataTypeID = PG_TEXT;
    }
    return result;
  };
  return adapter;
}

/**
 * The shadow database (used to replay migrations for a diff) needs a config object, not a URL (the
 * URL's database would win over the shadow's), and its pool closed before the database is dropped.
 */
class MigrationPg extends PrismaPg {
  constructor(private readonly pgConfig: pg.PoolConfig) {
    super(pgConfig);
  }

  override async connect() {
    return readCharAsText(await super.connect());
  }

  override async connectToShadowDb() {
    const adapter = await super.connectToShadowDb();
    const pool = adapter.underlyingDriver() as pg.Pool;
    const { database } = (pool as unknown as { options: pg.PoolConfig }).options;
    (adapter as unknown as { release: () => Promise<void> }).release = async () => {
      await pool.end();
      const admin = new pg.Client(this.pgConfig);
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${database}"`);
      } finally {
        await admin.end();
      }
    };
    return readCharAsText(adapter);
  }
}

/**
 * The WASM schema engine leaves a 10 s timer behind (a timeout it never clears), which kept every
 * `migrate` run alive for 10 s after its work was done. Its timers must not hold the process open:
 * the database sockets do, while work is pending.
 */
const setTimer = globalThis.setTimeout;
globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
  const timer = setTimer(...args);
  if (new Error().stack?.includes('wasm://')) timer.unref();
  return timer;
}) as typeof setTimeout;

const schema = process.env.MIGRATE_SCHEMA;
const url = process.env.MIGRATE_DATABASE_URL;
if (!schema || !url) throw new Error('tools/prisma.mjs sets MIGRATE_SCHEMA and MIGRATE_DATABASE_URL');

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema,
  // allowExitOnIdle: the CLI exits as soon as it is done, not after the pool's 10 s idle timeout.
  adapter: async () => new MigrationPg({ ...(parse(url) as pg.PoolConfig), allowExitOnIdle: true }),
} as never);
