import { ApiClient, bootstrapOrg, jwtPart, postgresServerUrl, TestStack, waitFor } from '@acct/testing';
import pg from 'pg';

const EMAIL = 'admin@refresh-stall.test';
const PASSWORD = 'admin-pass-1';

/**
 * README "Refresh grace window": a refresh token keeps working 5 s after its first use, so a client
 * retrying after a lost answer is not taken for a thief. A database that stalls a refresh past the
 * gateway's deadline (503 to the client) and then carries it out must leave the client that window
 * too: the first use it never saw answered is not over before the database even made it.
 *
 * The stall is a lock this test holds on the token's family (the one every rotation takes), longer
 * than the grace window.
 */
describe('a refresh the database stalls past the deadline', () => {
  let stack: TestStack;
  let api: ApiClient;
  let auth: pg.Client;

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''));
    bootstrapOrg(stack, 'refresh-stall', EMAIL, PASSWORD);
    const url = postgresServerUrl();
    url.pathname = new URL(stack.env.AUTH_DATABASE_URL).pathname;
    auth = new pg.Client({ connectionString: url.toString() });
    await auth.connect();
  });

  afterAll(async () => {
    await auth?.end();
    await stack?.close();
  });

  it('is answered 503, and the retry once the database answers gets the next token, its session alive', async () => {
    const tokens = await api.passwordToken(EMAIL, PASSWORD, { ip: '192.0.2.91' });
    const family = String(jwtPart(tokens.access_token, 1).sid);
    const refreshToken = tokens.refresh_token ?? '';
    const refresh = () =>
      api.tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, { ip: '192.0.2.92' });

    await auth.query('BEGIN');
    await auth.query(`SELECT pg_advisory_xact_lock(hashtext('auth:refresh_family'), hashtext($1))`, [family]);
    const stalled = await refresh();
    expect({ status: stalled.status, code: stalled.body.code }).toEqual({ status: 503, code: 'service_unavailable' });
    // The database stays stalled past the grace window, then carries the refresh out.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    await auth.query('COMMIT');
    await waitFor('the stalled refresh carried out', async () => {
      const { rows } = await auth.query(
        'SELECT 1 FROM refresh_tokens WHERE family_id = $1 AND first_used_at IS NOT NULL',
        [family],
      );
      return rows.length > 0 ? true : undefined;
    });

    const retried = await refresh();
    expect({ status: retried.status, code: retried.body.code }).toEqual({ status: 200, code: undefined });
    expect((await api.call('/v2/users/me', { token: tokens.access_token })).status).toBe(200);
  });
});
