import { TokenService } from '../tokens/token.service';
import { AuthHarness, HarnessOptions } from './auth-harness';
import { createTestDatabase, TestDatabase } from './test-database';

/** Auth started for a spec on its own database; read it inside tests and hooks. */
export interface AuthOnTestDatabase {
  readonly database: TestDatabase;
  readonly harness: AuthHarness;
  /** The token endpoint's service, where password logins go through the lockouts. */
  readonly tokens: TokenService;
}

/**
 * For the describe block that calls it: auth as the process builds it (AuthHarness) on a fresh,
 * migrated test database, started before the block's tests and closed, its database dropped, after
 * them. `options` as AuthHarness.start takes them (an identity stand-in, say), but for the database.
 */
export function useAuthOnTestDatabase(options: Omit<HarnessOptions, 'databaseUrl'>): AuthOnTestDatabase {
  let database: TestDatabase | undefined;
  let harness: AuthHarness | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    harness = await AuthHarness.start({ ...options, databaseUrl: database.url });
  });

  afterAll(async () => {
    await harness?.close();
    await database?.drop();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('auth is not started yet: read it inside a test or a hook');
    return value;
  };
  return {
    get database() {
      return started(database);
    },
    get harness() {
      return started(harness);
    },
    get tokens() {
      return started(harness).get(TokenService);
    },
  };
}
