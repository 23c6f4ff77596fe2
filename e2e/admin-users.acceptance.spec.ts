import { waitFor } from '@acct/testing';

import { call, expectProblem, issue, newOrg, raiseLimit, tokenRequest, uniqueEmail, User } from './support/client';

interface Page<T> {
  items: T[];
  next_cursor: string | null;
}
interface Session {
  id: string;
}
interface AuditEvent {
  action: string;
  actor_id: string | null;
  target: { type: string; id: string };
  request_id: string | null;
}
interface LoginEntry {
  username: string | null;
  subject: string | null;
  outcome: string;
  reason: string;
}

const PASSWORD = 'member-password-1';

/**
 * Contract §7 from outside (HTTP and the operator CLI only): an org's admin lists, changes, disables,
 * enables and deletes its users, sees and ends their sessions, and reads both audits.
 */
describe('administration of an org’s users', () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  let admin: string;

  /** An active user of the org (created, password set with a reset token) and its e-mail. */
  const activeUser = async (label: string, extra: Record<string, unknown> = {}) => {
    const email = uniqueEmail(label);
    const created = await call<User>('/v2/users', {
      token: admin,
      json: { email, display_name: `${label} user`, send_activation: false, ...extra },
    });
    expect(created.status).toBe(201);
    const reset = await call<{ token: string }>(`/v2/users/${created.body.id}/reset-password`, {
      token: admin,
      json: { send_email: false },
    });
    expect(
      (await call('/v2/users/me/password', { token: reset.body.token, json: { password: PASSWORD } })).status,
    ).toBe(200);
    return { id: created.body.id, email };
  };
  const login = (username: string, password = PASSWORD) => tokenRequest({ grant_type: 'password', username, password });

  beforeAll(async () => {
    org = await newOrg('admin-users');
    admin = org.admin.access_token;
    raiseLimit(org.org_id, 'users.write');
    raiseLimit(org.org_id, 'users.read');
  });

  it('lists the org’s users newest first with filters, paging without skipping or repeating', async () => {
    const made: string[] = [];
    for (let index = 0; index < 5; index += 1) made.push((await activeUser(`lister${index}`)).id);
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { status: number; body: Page<User> } = await call<Page<User>>(
        `/v2/users?limit=2&status=active${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token: admin },
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((user) => user.id));
      cursor = page.body.next_cursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(made));
    expect(seen.indexOf(made[4])).toBeLessThan(seen.indexOf(made[0]));
    const byQuery = await call<Page<User>>('/v2/users?q=lister3', { token: admin });
    expect(byQuery.body.items.map((user) => user.id)).toEqual([made[3]]);
  });

  it('patches with ETag and If-Match: a stale tag is 412 precondition_failed', async () => {
    const { id } = await activeUser('patched');
    const read = await call<User>(`/v2/users/${id}`, { token: admin });
    const etag = read.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    const patched = await call<User>(`/v2/users/${id}`, {
      method: 'PATCH',
      token: admin,
      json: { display_name: 'Renamed' },
      headers: { 'if-match': etag },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.display_name).toBe('Renamed');
    expect(patched.headers.get('etag')).not.toBe(etag);
    const stale = await call(`/v2/users/${id}`, {
      method: 'PATCH',
      token: admin,
      json: { display_name: 'Again' },
      headers: { 'if-match': etag },
    });
    expectProblem(stale, 412, 'precondition_failed');
  });

  it('takes a JSON merge patch as RFC 7396 has it: null puts the profile back to its defaults', async () => {
    const { id } = await activeUser('profiled');
    const patch = (body: string) =>
      call<User>(`/v2/users/${id}`, {
        method: 'PATCH',
        token: admin,
        headers: { 'content-type': 'application/merge-patch+json' },
        raw: body,
      });
    const changed = await patch('{"profile":{"locale":"en-GB","timezone":"Europe/London"}}');
    expect(changed.status).toBe(200);
    // The profile is not in a User answer; its ETag says the user changed, and back.
    const reset = await patch('{"profile":null}');
    expect(reset.status).toBe(200);
    expect(reset.headers.get('etag')).not.toBe(changed.headers.get('etag'));
    const again = await patch('{"profile":{"locale":"en-GB","timezone":"Europe/London"}}');
    expect(again.headers.get('etag')).not.toBe(reset.headers.get('etag'));
  });

  it('disables (login says account_disabled), enables, and deletes (the e-mail is free again)', async () => {
    const { id, email } = await activeUser('lifecycle');
    expect((await call(`/v2/users/${id}/disable`, { method: 'POST', token: admin })).status).toBe(200);
    const refused = await login(email);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_grant', code: 'account_disabled' });
    expect((await call(`/v2/users/${id}/enable`, { method: 'POST', token: admin })).status).toBe(200);
    expect((await login(email)).status).toBe(200);
    expect((await call(`/v2/users/${id}`, { method: 'DELETE', token: admin })).status).toBe(204);
    expect((await call(`/v2/users/${id}`, { token: admin })).status).toBe(404);
    const again = await call<User>('/v2/users', {
      token: admin,
      json: { email, display_name: 'Second life', send_activation: false },
    });
    expect(again.status).toBe(201);
  });

  it('lists a user’s sessions and ends one, and its tokens stop working', async () => {
    const { id, email } = await activeUser('sessions');
    const first = await issue({ grant_type: 'password', username: email, password: PASSWORD });
    await issue({ grant_type: 'password', username: email, password: PASSWORD });
    const listed = await call<{ items: Session[] }>(`/v2/users/${id}/sessions`, { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(2);
    const sid = (JSON.parse(Buffer.from(first.access_token.split('.')[1], 'base64url').toString()) as { sid: string })
      .sid;
    expect((await call(`/v2/users/${id}/sessions/${sid}`, { method: 'DELETE', token: admin })).status).toBe(204);
    await waitFor(
      'the ended session’s token refused',
      async () => ((await call('/v2/users/me', { token: first.access_token })).status === 401 ? true : undefined),
      { timeoutMs: 2000, intervalMs: 50 },
    );
    expect((await call<{ items: Session[] }>(`/v2/users/${id}/sessions`, { token: admin })).body.items).toHaveLength(1);
  });

  it('shows the admin both audits: the logins (failed ones of its users too) and every admin action', async () => {
    const { id, email } = await activeUser('audited');
    expect((await login(email, 'wrong-password')).status).toBe(400);
    const logins = await call<Page<LoginEntry>>(`/v2/audit/logins?user_id=${id}&outcome=failure`, { token: admin });
    expect(logins.status).toBe(200);
    expect(logins.body.items).toEqual([
      expect.objectContaining({ subject: id, outcome: 'failure', reason: 'invalid_grant' }),
    ]);
    expect(
      (
        await call(`/v2/users/${id}/disable`, {
          method: 'POST',
          token: admin,
          headers: { 'x-request-id': 'acceptance-disable' },
        })
      ).status,
    ).toBe(200);
    const events = await waitFor(
      'the disable in the admin audit',
      async () => {
        const page = await call<Page<AuditEvent>>('/v2/audit/events?limit=100', { token: admin });
        return page.body.items.find((event) => event.target.id === id && event.action === 'user.disabled');
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(events).toMatchObject({ request_id: 'acceptance-disable', target: { type: 'user', id } });
    expect(events.actor_id).toBeTruthy();
    const member = await activeUser('not-an-admin');
    const memberToken = (await issue({ grant_type: 'password', username: member.email, password: PASSWORD }))
      .access_token;
    expectProblem(await call('/v2/audit/events', { token: memberToken }), 403, 'forbidden');
  });
});
