import {
  Answer,
  ApiClient,
  Bootstrap,
  bootstrapOrg,
  expectProblem,
  postgresServerUrl,
  TestStack,
  waitFor,
} from '@acct/testing';
import pg from 'pg';

const EMAIL = 'admin@login-outage.test';
const PASSWORD = 'admin-pass-1';
const IP = '192.0.2.88';
/** The lockout pair's "address" of the MFA settings' current-password check (auth, mfa/current-password.ts). */
const MFA_SETTINGS_SOURCE = 'mfa-enrolment';

/**
 * Contract §4: five *failed* logins of one (username, IP) lock the pair. An attempt whose password
 * identity never checked (identity hung, crashed or past the deadline after auth took the attempt's
 * slot) is answered 503, and is no failure: once identity answers again, the owner's right password
 * works, however many such attempts the outage cost. Likewise the MFA settings' current-password
 * check, counted in its own pair.
 *
 * To hold identity away exactly between the slot and the password check, the test holds the lock of
 * the pair's row in auth's database: the attempt waits in the statement that takes its slot (so
 * whatever identity had to answer before is answered), identity is frozen (SIGSTOP), the lock let go.
 */
describe('password checks during an identity outage', () => {
  let stack: TestStack;
  let api: ApiClient;
  let org: Bootstrap;
  let auth: pg.Client;
  let admin: pg.Client;

  const authDatabase = () => new URL(stack.env.AUTH_DATABASE_URL).pathname.slice(1);

  /** A password grant from IP, waiting out the per-IP `auth` tier as Retry-After says. */
  const login = async () => {
    for (;;) {
      const answer = await api.tokenRequest(
        { grant_type: 'password', username: EMAIL, password: PASSWORD },
        { ip: IP },
      );
      if (answer.body.code !== 'rate_limited') return answer;
      await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after')) * 1000));
    }
  };

  /**
   * Runs `attempt` with identity frozen from the moment it waits to take a slot of the pair
   * (`username`, `source`) until it is answered; identity goes on afterwards.
   */
  async function withIdentityFrozenAfterSlot(
    [username, source]: [string, string],
    attempt: () => Promise<Answer<unknown>>,
  ): Promise<Answer<unknown>> {
    // The pair's row, so the attempt can be held on its lock (attempts 0: no attempt counted).
    await auth.query(
      `INSERT INTO login_throttles (username, client_ip, attempts, window_started_at) VALUES ($1, $2, 0, now())
       ON CONFLICT (username, client_ip) DO NOTHING`,
      [username, source],
    );
    await auth.query('BEGIN');
    await auth.query('SELECT 1 FROM login_throttles WHERE username = $1 AND client_ip = $2 FOR UPDATE', [
      username,
      source,
    ]);
    const answer = attempt();
    try {
      await waitFor(
        'the attempt waiting to take its slot',
        async () => {
          const { rows } = await admin.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> $2`,
            [authDatabase(), (auth as unknown as { processID: number }).processID],
          );
          return rows.length > 0 ? true : undefined;
        },
        { intervalMs: 20 },
      );
      stack.signalApp('identity', 'SIGSTOP');
    } finally {
      await auth.query('ROLLBACK');
    }
    try {
      return await answer;
    } finally {
      stack.signalApp('identity', 'SIGCONT');
    }
  }

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''));
    org = bootstrapOrg(stack, 'login-outage', EMAIL, PASSWORD);
    const url = postgresServerUrl();
    url.pathname = `/${authDatabase()}`;
    auth = new pg.Client({ connectionString: url.toString() });
    admin = new pg.Client({ connectionString: postgresServerUrl().toString() });
    await Promise.all([auth.connect(), admin.connect()]);
  });

  afterAll(async () => {
    stack?.signalApp('identity', 'SIGCONT');
    await Promise.all([auth?.end(), admin?.end()]);
    await stack?.close();
  });

  it('counts no attempt whose password identity could not check, so the owner signs in once it answers', async () => {
    for (let outage = 0; outage < 5; outage += 1) {
      expectProblem(
        await withIdentityFrozenAfterSlot([`user:${org.admin_user_id}`, IP], login),
        503,
        'service_unavailable',
      );
    }
    const after = await login();
    expect({ status: after.status, code: after.body.code }).toEqual({ status: 200, code: undefined });
    expect(after.body.access_token).toEqual(expect.any(String));
  });

  it('counts no MFA settings password check identity could not answer', async () => {
    const { access_token: token } = await api.issue(
      { grant_type: 'password', username: EMAIL, password: PASSWORD },
      { ip: '192.0.2.90' },
    );
    const enrol = () => api.call('/v2/users/me/mfa/totp', { token, json: { password: PASSWORD } });
    for (let outage = 0; outage < 5; outage += 1) {
      expectProblem(await withIdentityFrozenAfterSlot([EMAIL, MFA_SETTINGS_SOURCE], enrol), 503, 'service_unavailable');
    }
    const enrolled = await enrol();
    expect({ status: enrolled.status, code: enrolled.body.code }).toEqual({ status: 201, code: undefined });
  });

  it('answers an MFA settings change that needs the password 503 while identity is away, not "wrong password"', async () => {
    const { access_token: token } = await api.issue(
      { grant_type: 'password', username: EMAIL, password: PASSWORD },
      { ip: '192.0.2.89' },
    );
    const enrol = () => api.call('/v2/users/me/mfa/totp', { token, json: { password: PASSWORD } });
    await stack.stopApp('identity', 'SIGKILL');
    const away = await enrol();
    expectProblem(away, 503, 'service_unavailable');
    expect(Number(away.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    await stack.startApp('identity');
    const enrolled = await waitFor('identity answering again', async () => {
      const answer = await enrol();
      return answer.status === 503 ? undefined : answer;
    });
    expect(enrolled.status).toBe(201);
  });
});
