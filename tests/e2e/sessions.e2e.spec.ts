import { request, TestStack, waitFor } from '@acct/testing';

interface Tokens {
  access_token: string;
  refresh_token: string;
}
interface Session {
  id: string;
  client_id: string;
  ip: string | null;
  device_id: string | null;
  user_agent: string | null;
}

/** Contract §7 / issue 14 item 2: an ended session's access tokens are refused everywhere within 1 s. */
const WITHIN_MS = 1000;

/**
 * A user's sessions through real processes: two gateways (each with its own in-memory revocation
 * set) in front of one auth, identity and platform. Ending a session over HTTP at one gateway makes
 * the access token of that session refused at both within 1 s, and leaves the other session alone.
 */
describe('ending a session through two gateways', () => {
  let stack: TestStack;
  let gateways: string[];
  let ip = 0;
  const nextIp = () => `198.51.100.${(ip += 1)}`;

  const login = async (deviceId: string): Promise<Tokens & { ip: string }> => {
    const from = nextIp();
    const { status, body } = await request<Tokens>(`${gateways[0]}/v2/auth/token`, {
      body: { grant_type: 'password', username: 'admin@sessions.test', password: 'admin-pass-1' },
      headers: { 'x-forwarded-for': from, 'x-device-id': deviceId, 'user-agent': `SessionsTest/${deviceId}` },
    });
    expect(status).toBe(200);
    return { ...body, ip: from };
  };
  const sidOf = (token: string) =>
    (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sid: string }).sid;
  const statusAt = async (gateway: string, token: string) =>
    (await request(`${gateway}/v2/users/me`, { token, headers: { 'x-forwarded-for': nextIp() } })).status;

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    gateways = [stack.url(''), await stack.startExtraGateway()];
    stack.cli('bootstrap', '--org', 'sessions', '--email', 'admin@sessions.test', '--password', 'admin-pass-1');
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('shows a session’s device id and user agent as the login audit does: control characters escaped', async () => {
    // HTTP lets a header carry a tab, and bytes that Node reads as C1 controls (here NEL and CSI).
    const from = nextIp();
    const headers = { 'x-forwarded-for': from, 'x-device-id': 'phone\t1', 'user-agent': 'App/2.0\u0085\u009b31m' };
    const { status, body } = await request<Tokens>(`${gateways[0]}/v2/auth/token`, {
      body: { grant_type: 'password', username: 'admin@sessions.test', password: 'admin-pass-1' },
      headers,
    });
    expect(status).toBe(200);
    const escaped = { device_id: 'phone\\u00091', user_agent: 'App/2.0\\u0085\\u009b31m' };
    const audit = await request<{ items: Array<{ ip: string; device_id: string; user_agent: string }> }>(
      `${gateways[0]}/v2/audit/logins?limit=100`,
      { token: body.access_token, headers: { 'x-forwarded-for': nextIp() } },
    );
    expect(audit.body.items.find((entry) => entry.ip === from)).toMatchObject(escaped);
    const listed = await request<{ items: Session[] }>(`${gateways[0]}/v2/users/me/sessions`, {
      token: body.access_token,
      headers: { 'x-forwarded-for': nextIp() },
    });
    expect(listed.body.items.find((session) => session.id === sidOf(body.access_token))).toMatchObject(escaped);
  });

  it('lists the sessions, and ending one refuses its access token at both gateways within 1 s', async () => {
    const ended = await login('device-a');
    const kept = await login('device-b');

    const listed = await request<{ items: Session[] }>(`${gateways[1]}/v2/users/me/sessions`, {
      token: kept.access_token,
      headers: { 'x-forwarded-for': nextIp() },
    });
    expect(listed.status).toBe(200);
    expect(listed.body.items.find((session) => session.id === sidOf(ended.access_token))).toMatchObject({
      ip: ended.ip,
      device_id: 'device-a',
      user_agent: 'SessionsTest/device-a',
    });
    for (const gateway of gateways) expect(await statusAt(gateway, ended.access_token)).toBe(200);

    const revoked = await request(`${gateways[0]}/v2/users/me/sessions/${sidOf(ended.access_token)}`, {
      method: 'DELETE',
      token: kept.access_token,
      headers: { 'x-forwarded-for': nextIp() },
    });
    expect(revoked.status).toBe(204);
    await Promise.all(
      gateways.map((gateway) =>
        waitFor(
          `401 at ${gateway}`,
          async () => ((await statusAt(gateway, ended.access_token)) === 401 ? true : undefined),
          { timeoutMs: WITHIN_MS, intervalMs: 25 },
        ),
      ),
    );
    for (const gateway of gateways) expect(await statusAt(gateway, kept.access_token)).toBe(200);
    const refreshed = await request<{ error?: string }>(`${gateways[1]}/v2/auth/token`, {
      body: { grant_type: 'refresh_token', refresh_token: ended.refresh_token },
      headers: { 'x-forwarded-for': nextIp() },
    });
    expect(refreshed.body.error).toBe('invalid_grant');
  });
});
