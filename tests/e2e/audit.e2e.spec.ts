import { request, TestStack, waitFor } from '@acct/testing';

interface Tokens {
  access_token: string;
}
interface LoginEntry {
  at: string;
  username: string | null;
  subject: string | null;
  ip: string | null;
  outcome: string;
  reason: string;
}
interface EventEntry {
  id: string;
  actor_id: string | null;
  action: string;
  target: { type: string; id: string };
  request_id: string | null;
  details: Record<string, string | string[]> | null;
}
interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

const PASSWORD = 'audit-pass-1';

/**
 * The audits over HTTP (contract §7, issue 14 item 4) and login by phone (item 5), through real
 * processes: the org's admins read their org's login audit and admin actions, page through them with
 * a cursor that neither skips nor repeats while entries are added, and nobody else reads them; a user
 * signs in with its phone in every spelling, and failures by phone and by e-mail share one lockout.
 */
describe('audits and login by phone', () => {
  let stack: TestStack;
  let ip = 0;
  // One /24 each: the gateway's per-IP limits count an IPv4 client by its /24.
  const nextIp = () => `198.18.${(ip += 1)}.7`;
  let admin: string;
  let otherAdmin: string;

  /**
   * A password grant from one client address. The `auth` group allows an IP about 3 requests at once
   * then one per 6 s: a `rate_limited` answer is waited out (Retry-After), unlike `login_locked`.
   */
  const token = async (username: string, password = PASSWORD, from = nextIp()) => {
    for (;;) {
      const answer = await request<Tokens & { error?: string; code?: string }>(stack.url('/v2/auth/token'), {
        body: { grant_type: 'password', username, password },
        headers: { 'x-forwarded-for': from },
      });
      if (answer.body.code !== 'rate_limited') return answer;
      const retryAfter = Number(answer.headers.get('retry-after') ?? '1');
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    }
  };
  const get = <T>(path: string, accessToken: string) =>
    request<T>(stack.url(path), { token: accessToken, headers: { 'x-forwarded-for': nextIp() } });
  /** The admin's writes share one token's users.write budget (burst 10): wait for it when spent. */
  const politely = async <T extends { status: number }>(send: () => Promise<T>): Promise<T> => {
    for (;;) {
      const answer = await send();
      if (answer.status !== 429) return answer;
      await new Promise((resolve) => setTimeout(resolve, 1100));
    }
  };
  /** An active user: created by the admin, its password set with a reset token (as activation does). */
  const createUser = async (body: Record<string, unknown>) => {
    const call = (path: string, payload: unknown, accessToken = admin) =>
      politely(() =>
        request<{ id: string; token: string }>(stack.url(path), {
          body: payload,
          token: accessToken,
          headers: { 'x-forwarded-for': nextIp() },
        }),
      );
    const created = await call('/v2/users', { display_name: 'Audit user', ...body });
    expect(created.status).toBe(201);
    const reset = await call(`/v2/users/${created.body.id}/reset-password`, { send_email: false });
    expect(reset.status).toBe(200);
    expect((await call('/v2/users/me/password', { password: PASSWORD }, reset.body.token)).status).toBe(200);
    return created.body.id;
  };

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    stack.cli('bootstrap', '--org', 'audit', '--email', 'admin@audit.test', '--password', PASSWORD);
    stack.cli('bootstrap', '--org', 'elsewhere', '--email', 'admin@elsewhere.test', '--password', PASSWORD);
    admin = (await token('admin@audit.test')).body.access_token;
    otherAdmin = (await token('admin@elsewhere.test')).body.access_token;
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
  });

  it('signs in with the phone in every spelling, and refuses a national number like an unknown username', async () => {
    const id = await createUser({ email: 'phone@audit.test', phone: '+86 138-0013-8100' });
    for (const spelling of ['+8613800138100', '+86 138 0013 8100', '+86-138-0013-8100', '008613800138100']) {
      const answer = await token(spelling);
      expect({ spelling, status: answer.status, body: answer.status === 200 ? {} : answer.body }).toEqual({
        spelling,
        status: 200,
        body: {},
      });
      const claims = JSON.parse(Buffer.from(answer.body.access_token.split('.')[1], 'base64url').toString()) as {
        sub: string;
      };
      expect(claims.sub).toBe(id);
    }
    const national = await token('13800138100');
    const unknown = await token('+8613800138999');
    for (const refused of [national, unknown]) {
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_grant');
    }
  });

  it('counts failures by phone toward the e-mail and the other way round: one lockout', async () => {
    await createUser({ email: 'shared@audit.test', phone: '+86 138 0013 8200' });
    const from = nextIp();
    for (const username of [
      '+8613800138200',
      'shared@audit.test',
      '0086 138 0013 8200',
      'Shared@Audit.test',
      '+86-138-0013-8200',
    ]) {
      const refused = await token(username, 'wrong-password', from);
      expect({ username, status: refused.status, code: refused.body.error ?? refused.body.code }).toEqual({
        username,
        status: 400,
        code: 'invalid_grant',
      });
    }
    for (const username of ['shared@audit.test', '+8613800138200']) {
      const locked = await token(username, PASSWORD, from);
      expect(locked.status).toBe(429);
    }
    expect((await token('shared@audit.test', PASSWORD, nextIp())).status).toBe(200);
  });

  it("shows the org's admins the org's logins, failed ones of its users included, with filters", async () => {
    const id = await createUser({ email: 'failing@audit.test', phone: '+86 138 0013 8300' });
    const from = nextIp();
    expect((await token('+86 138 0013 8300', 'wrong-password', from)).status).toBe(400);
    expect((await token('nobody@audit.test', 'wrong-password', from)).status).toBe(400);
    const failures = await get<Page<LoginEntry>>(`/v2/audit/logins?user_id=${id}&outcome=failure`, admin);
    expect(failures.status).toBe(200);
    expect(failures.body.items).toEqual([
      expect.objectContaining({
        username: '+86 138 0013 8300',
        subject: id,
        ip: from,
        outcome: 'failure',
        reason: 'invalid_grant',
      }),
    ]);
    const all = await get<Page<LoginEntry>>('/v2/audit/logins?limit=100', admin);
    expect(all.body.items.some((entry) => entry.username === 'nobody@audit.test')).toBe(false);
    const elsewhere = await get<Page<LoginEntry>>('/v2/audit/logins?limit=100', otherAdmin);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.items.every((entry) => entry.username !== '+86 138 0013 8300')).toBe(true);
    expect((await get('/v2/audit/logins?limit=0', admin)).status).toBe(400);
    expect((await get('/v2/audit/logins?outcome=maybe', admin)).status).toBe(400);
    expect((await get('/v2/audit/logins?cursor=nonsense', admin)).status).toBe(400);
  });

  it("records every admin action with who, what, target and request id, for the org's admins only", async () => {
    const id = await createUser({ email: 'target@audit.test' });
    const patched = await politely(() =>
      request(stack.url(`/v2/users/${id}`), {
        method: 'PATCH',
        body: { roles: ['viewer'] },
        token: admin,
        headers: {
          'x-forwarded-for': nextIp(),
          'x-request-id': 'audit-e2e-patch',
        },
      }),
    );
    expect(patched.status).toBe(200);
    const disabled = await politely(() =>
      request(stack.url(`/v2/users/${id}/disable`), {
        method: 'POST',
        token: admin,
        headers: { 'x-forwarded-for': nextIp(), 'x-request-id': 'audit-e2e-disable' },
      }),
    );
    expect(disabled.status).toBe(200);
    const events = await waitFor(
      'both actions in the audit',
      async () => {
        const page = await get<Page<EventEntry>>('/v2/audit/events?limit=100', admin);
        const mine = page.body.items.filter((entry) => entry.target.id === id);
        return mine.length >= 4 ? mine : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    // createUser took a reset link for the user (send_email: false): the admin holds a way in, audited.
    expect(events.map((entry) => entry.action)).toEqual([
      'user.disabled',
      'user.updated',
      'user.password_reset_issued',
      'user.created',
    ]);
    expect(events[0]).toMatchObject({ request_id: 'audit-e2e-disable', target: { type: 'user', id } });
    expect(events[1]).toMatchObject({
      request_id: 'audit-e2e-patch',
      details: { changed: ['roles'], roles_before: ['member'], roles_after: ['viewer'] },
    });
    expect(events[0]?.actor_id).toBe(events[1]?.actor_id);
    expect(events[0]?.actor_id).toBeTruthy();

    const elsewhere = await get<Page<EventEntry>>('/v2/audit/events?limit=100', otherAdmin);
    expect(elsewhere.body.items.some((entry) => entry.target.id === id)).toBe(false);
    for (const role of ['member', 'viewer']) {
      const email = `${role}-reader@audit.test`;
      await createUser({ email, roles: [role] });
      const reader = (await token(email)).body.access_token;
      for (const path of ['/v2/audit/events', '/v2/audit/logins']) {
        const refused = await get<{ code: string }>(path, reader);
        expect({ role, path, status: refused.status }).toEqual({ role, path, status: 403 });
      }
    }
  });

  it('pages the login audit newest first, neither skipping nor repeating while logins are added', async () => {
    for (let index = 0; index < 7; index += 1) await token('admin@audit.test');
    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    const first = await get<Page<LoginEntry>>('/v2/audit/logins?limit=100', admin);
    const total = first.body.items.length;
    while (cursor !== null && pages < 100) {
      const page: { body: Page<LoginEntry> } = await get<Page<LoginEntry>>(
        `/v2/audit/logins?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        admin,
      );
      seen.push(...page.body.items.map((entry) => `${entry.at}|${entry.ip}|${entry.reason}|${entry.username}`));
      cursor = page.body.next_cursor;
      pages += 1;
      await token('admin@audit.test'); // a newer entry: on the first page, never on a later one
    }
    expect(seen.length).toBeGreaterThanOrEqual(total);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
