import { randomInt } from 'node:crypto';

import {
  ApiClient,
  expectProblem,
  freshIp,
  newOrg,
  raiseLimit,
  TestStack,
  uniqueEmail,
  User,
  waitFor,
} from '@acct/testing';

/**
 * Bad input to the user endpoints gets one clear `400 validation_failed` naming every failing field,
 * and changes nothing: what the gateway lets through reaches identity as it was sent.
 */
describe('user input the gateway must judge as identity does', () => {
  let stack: TestStack;
  let api: ApiClient;
  let token: string;
  let adminId: string;

  beforeAll(async () => {
    stack = await TestStack.start({
      apps: ['identity', 'auth', 'platform', 'gateway'],
      env: { TRUSTED_PROXIES: '127.0.0.1' },
    });
    api = new ApiClient(stack.url(''), { ip: freshIp });
    const org = await newOrg(api, stack, 'input');
    for (const group of ['users.write', 'users.read']) raiseLimit(stack, org.org_id, group);
    token = org.admin.access_token;
    adminId = org.admin_user_id;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const usersNamed = async (email: string) => {
    const page = await api.call<{ items: User[] }>(`/v2/users?q=${encodeURIComponent(email)}`, { token });
    expect(page.status).toBe(200);
    return page.body.items;
  };

  it('refuses a display_name holding a lone surrogate instead of storing it as U+FFFD', async () => {
    const email = uniqueEmail('surrogate');
    const answer = await api.createUser(token, { email, display_name: 'Ada\ud800' });
    expect(expectProblem(answer, 400, 'validation_failed').errors).toEqual([
      { field: 'display_name', message: 'must not contain control characters' },
    ]);
    expect(await usersNamed(email)).toEqual([]);
  });

  it('refuses a PATCH of display_name holding a lone surrogate and leaves the user as it was', async () => {
    const created = await api.createUser(token, { email: uniqueEmail('patch-surrogate'), display_name: 'Ada' });
    expect(created.status).toBe(201);
    const answer = await api.call(`/v2/users/${created.body.id}`, {
      token,
      method: 'PATCH',
      json: { display_name: '\udc00Ada' },
    });
    expectProblem(answer, 400, 'validation_failed');
    const after = await api.call<User>(`/v2/users/${created.body.id}`, { token });
    expect(after.body.display_name).toBe('Ada');
    expect(after.headers.get('etag')).toBe(created.headers.get('etag'));
  });

  // RFC 9110 §13.2.1: a server that sends an ETag evaluates If-None-Match, so a client revalidating its
  // copy of a user gets 304 while it is current and the new user once it changed.
  it('answers a GET naming the user’s current ETag in If-None-Match 304 without a body, and 200 once it changed', async () => {
    const created = await api.createUser(token, { email: uniqueEmail('conditional'), display_name: 'Ada' });
    const etag = created.headers.get('etag')!;
    for (const path of [`/v2/users/${created.body.id}`, '/v2/users/me']) {
      const current = path.endsWith('/me') ? (await api.call(path, { token })).headers.get('etag')! : etag;
      const unchanged = await api.call(path, { token, headers: { 'if-none-match': `W/"x", ${current}` } });
      expect({ status: unchanged.status, etag: unchanged.headers.get('etag'), body: unchanged.text }).toEqual({
        status: 304,
        etag: current,
        body: '',
      });
    }
    await api.call(`/v2/users/${created.body.id}`, { token, method: 'PATCH', json: { display_name: 'Ada L.' } });
    const changed = await api.call<User>(`/v2/users/${created.body.id}`, { token, headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.display_name).toBe('Ada L.');
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  // Contract §7: If-Match that no longer matches is 412, on a read too (RFC 9110 §13.1.1: an origin
  // server that receives If-Match evaluates it before performing the method, GET included).
  it('answers a GET whose If-Match does not name the user’s current ETag 412, and 200 while it does', async () => {
    const created = await api.createUser(token, { email: uniqueEmail('if-match-get'), display_name: 'Ada' });
    const etag = created.headers.get('etag')!;
    for (const path of [`/v2/users/${created.body.id}`, '/v2/users/me']) {
      const current = path.endsWith('/me') ? (await api.call(path, { token })).headers.get('etag')! : etag;
      expectProblem(await api.call(path, { token, headers: { 'if-match': '"stale"' } }), 412, 'precondition_failed');
      // If-Match is judged before If-None-Match (RFC 9110 §13.2.2): a stale one is 412, not 304.
      const both = await api.call(path, { token, headers: { 'if-match': '"stale"', 'if-none-match': current } });
      expect(both.status).toBe(412);
      for (const condition of [current, `"other", ${current}`, '*']) {
        const matching = await api.call<User>(path, { token, headers: { 'if-match': condition } });
        expect({ status: matching.status, etag: matching.headers.get('etag') }).toEqual({ status: 200, etag: current });
      }
    }
  });

  // RFC 9110 §13.1.2: If-None-Match that matches (`*`: the user exists; or its current ETag) means the
  // client wants the change only while the user is not in that state: 412 for any method but GET/HEAD.
  it('refuses a PATCH, disable, enable or DELETE whose If-None-Match matches the user with 412, changing nothing', async () => {
    const created = await api.createUser(token, { email: uniqueEmail('if-none-match'), display_name: 'Ada' });
    const path = `/v2/users/${created.body.id}`;
    const etag = created.headers.get('etag')!;
    const changes = [
      { method: 'PATCH', path, json: { display_name: 'Changed' } },
      { method: 'POST', path: `${path}/disable` },
      { method: 'POST', path: `${path}/enable` },
      { method: 'DELETE', path },
    ];
    for (const change of changes) {
      for (const condition of ['*', etag, `W/${etag}`, `"other", ${etag}`]) {
        const answer = await api.call(change.path, {
          token,
          method: change.method,
          json: change.json,
          headers: { 'if-none-match': condition },
        });
        expectProblem(answer, 412, 'precondition_failed');
      }
    }
    const after = await api.call<User>(path, { token });
    expect({ status: after.status, name: after.body.display_name, etag: after.headers.get('etag') }).toEqual({
      status: 200,
      name: 'Ada',
      etag,
    });
    // A tag the user no longer has: the change goes ahead.
    const patched = await api.call<User>(path, {
      token,
      method: 'PATCH',
      json: { display_name: 'Changed' },
      headers: { 'if-none-match': '"an-old-state"' },
    });
    expect({ status: patched.status, name: patched.body.display_name }).toEqual({ status: 200, name: 'Changed' });
  });

  it('refuses a password holding a lone surrogate instead of storing the hash of another text', async () => {
    const email = uniqueEmail('surrogate-password');
    const answer = await api.createUser(token, { email, display_name: 'Ada', password: 'correct horse\ud800' });
    expect(expectProblem(answer, 400, 'validation_failed').errors).toEqual([
      { field: 'password', message: 'must be valid Unicode text' },
    ]);
    expect(await usersNamed(email)).toEqual([]);
  });

  it('refuses to set a password holding a lone surrogate and leaves the one-time token unused', async () => {
    const email = uniqueEmail('surrogate-activation');
    const created = await api.createUser(token, { email, display_name: 'Ada', send_activation: false });
    expect(created.status).toBe(201);
    const reset = await api.call<{ token: string }>(`/v2/users/${created.body.id}/reset-password`, {
      token,
      json: { send_email: false },
    });
    expect(reset.status).toBe(200);
    const refused = await api.call('/v2/users/me/password', {
      token: reset.body.token,
      json: { password: 'correct horse\udc00' },
    });
    expect(expectProblem(refused, 400, 'validation_failed').errors).toEqual([
      { field: 'password', message: 'must be valid Unicode text' },
    ]);
    const user = await api.call<User>(`/v2/users/${created.body.id}`, { token });
    expect(user.body.status).toBe('pending');
    const set = await api.call('/v2/users/me/password', {
      token: reset.body.token,
      json: { password: 'correct horse' },
    });
    expect(set.status).toBe(200);
  });

  /** A JSON body written in Latin-1, as a client that ignores RFC 8259 §8.1 (JSON is UTF-8) sends it. */
  const latin1 = (json: Record<string, unknown>) => Buffer.from(JSON.stringify(json), 'latin1');

  it('refuses a JSON body that is not UTF-8 instead of storing its bytes as U+FFFD (RFC 8259 §8.1)', async () => {
    const email = uniqueEmail('latin1');
    const created = await api.call('/v2/users', {
      token,
      headers: { 'content-type': 'application/json' },
      raw: latin1({ email, display_name: 'Zoë', password: 'pässwörd-1', send_activation: false }),
    });
    expectProblem(created, 400, 'malformed_body');
    expect(await usersNamed(email)).toEqual([]);

    const user = await api.createUser(token, { email: uniqueEmail('latin1-patch'), display_name: 'Ada' });
    expect(user.status).toBe(201);
    const patched = await api.call(`/v2/users/${user.body.id}`, {
      token,
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      raw: latin1({ display_name: 'Zoë' }),
    });
    expectProblem(patched, 400, 'malformed_body');
    const after = await api.call<User>(`/v2/users/${user.body.id}`, { token });
    expect(after.body.display_name).toBe('Ada');

    // The token endpoint's refusal carries OAuth's members, as its other body refusals do.
    const grant = await api.tokenRequest(
      {},
      {
        headers: { 'content-type': 'application/json' },
        raw: latin1({ grant_type: 'password', username: email, password: 'pässwörd-1' }),
      },
    );
    expect(expectProblem(grant, 400, 'malformed_body').error).toBe('invalid_request');
  });

  it('takes a request without content as one without a body, whatever Content-Type it names', async () => {
    // A client that sends `Content-Type: application/json` on every request, a body or not.
    const json = { 'content-type': 'application/json' };
    const created = await api.createUser(token, { email: uniqueEmail('empty-body'), display_name: 'Ada' });
    expect(created.status).toBe(201);
    const disabled = await api.call<User>(`/v2/users/${created.body.id}/disable`, {
      token,
      method: 'POST',
      headers: json,
    });
    expect({ status: disabled.status, user: disabled.body.status }).toEqual({ status: 200, user: 'disabled' });
    const enabled = await api.call<User>(`/v2/users/${created.body.id}/enable`, {
      token,
      method: 'POST',
      headers: { 'content-type': 'application/merge-patch+json' },
      raw: '',
    });
    expect(enabled.status).toBe(200);
    // The reset operation's body is optional: none is the default, `send_email: true`.
    const reset = await api.call(`/v2/users/${created.body.id}/reset-password`, {
      token,
      method: 'POST',
      headers: json,
    });
    expect(reset.status).toBe(202);
    // An operation that needs a body still refuses the missing one.
    expectProblem(await api.call('/v2/users', { token, method: 'POST', headers: json }), 400, 'malformed_body');
  });

  // Contract §1: unknown fields are refused (`validation_failed`), a body that is not an object is
  // `malformed_body`. An operation that takes no body is no exception: a client sending
  // `{"reason": …}` to disable, or `{"except_current": true}` to end sessions, must not have it
  // silently dropped while the operation goes on without it.
  it('refuses fields sent to an operation that takes no body, and changes nothing', async () => {
    const created = await api.createUser(token, { email: uniqueEmail('bodiless'), display_name: 'Ada' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const operations: Array<[string, string]> = [
      ['POST', `/v2/users/${id}/disable`],
      ['POST', `/v2/users/${id}/enable`],
      ['DELETE', `/v2/users/${id}/sessions`],
      ['DELETE', `/v2/users/${id}/sessions/${adminId}`],
      ['DELETE', `/v2/users/${id}/lockout`],
      ['DELETE', `/v2/users/${id}`],
    ];
    for (const [method, path] of operations) {
      const unknown = await api.call(path, { token, method, json: { reason: 'left the company' } });
      expect({ method, path, errors: expectProblem(unknown, 400, 'validation_failed').errors }).toEqual({
        method,
        path,
        errors: [{ field: 'reason', message: 'is not a known field' }],
      });
      expectProblem(await api.call(path, { token, method, json: ['reason'] }), 400, 'malformed_body');
    }
    // Nothing happened: still there, not disabled.
    const after = await api.call<User>(`/v2/users/${id}`, { token });
    expect({ status: after.status, user: after.body.status }).toEqual({ status: 200, user: 'pending' });
    // An empty object is no field at all: the operation runs.
    const disabled = await api.call<User>(`/v2/users/${id}/disable`, { token, method: 'POST', json: {} });
    expect({ status: disabled.status, user: disabled.body.status }).toEqual({ status: 200, user: 'disabled' });
  });

  it('reads the Bearer scheme in any letter case and after more than one space (RFC 9110 §11.1, RFC 6750 §2.1)', async () => {
    const created = await api.createUser(token, {
      email: uniqueEmail('scheme'),
      display_name: 'Ada',
      send_activation: false,
    });
    expect(created.status).toBe(201);
    const reset = await api.call<{ token: string }>(`/v2/users/${created.body.id}/reset-password`, {
      token,
      json: { send_email: false },
    });
    expect(reset.status).toBe(200);
    const check = await api.call('/activate/check', { headers: { authorization: `bearer ${reset.body.token}` } });
    expect(check.status).toBe(204);
    const set = await api.call<User>('/v2/users/me/password', {
      headers: { authorization: `BEARER  ${reset.body.token}` },
      json: { password: 'correct horse' },
    });
    expect({ status: set.status, user: set.body.status }).toEqual({ status: 200, user: 'active' });
    const me = await api.call<User>('/v2/users/me', { headers: { authorization: `Bearer  ${token}` } });
    expect({ status: me.status, id: me.body.id }).toEqual({ status: 200, id: adminId });
  });

  it('names a time zone identity refuses beside the other failing fields, in one answer', async () => {
    for (const timezone of ['asia/shanghai', 'GMT', 'EST5EDT']) {
      const answer = await api.createUser(token, { email: 'not-an-email', display_name: 'Ada', profile: { timezone } });
      expect(expectProblem(answer, 400, 'validation_failed').errors?.map((error) => error.field)).toEqual([
        'email',
        'profile.timezone',
      ]);
    }
  });

  it('names an e-mail with a local part over 64 characters beside the other failing fields', async () => {
    const answer = await api.createUser(token, { email: `${'a'.repeat(65)}@example.test`, display_name: ' ' });
    expect(expectProblem(answer, 400, 'validation_failed').errors?.map((error) => error.field)).toEqual([
      'email',
      'display_name',
    ]);
  });

  it('filters the login audit by a user id in either letter case, as GET /v2/users/{id} reads it', async () => {
    const logins = (userId: string) =>
      api.call<{ items: Array<{ subject: string }> }>(`/v2/audit/logins?user_id=${userId}`, { token });
    const lower = await waitFor('the admin login in the audit', async () => {
      const answer = await logins(adminId);
      return answer.body.items.length > 0 ? answer.body.items : undefined;
    });
    const upper = await logins(adminId.toUpperCase());
    expect(upper.status).toBe(200);
    expect(upper.body.items).toEqual(lower);
    expect((await api.call(`/v2/users/${adminId.toUpperCase()}`, { token })).status).toBe(200);
  });

  it('says a field sent with the wrong type has the wrong type, not that it is missing', async () => {
    const answer = await api.createUser(token, {
      email: uniqueEmail('types'),
      display_name: null,
      send_activation: 'true',
    });
    expect(expectProblem(answer, 400, 'validation_failed').errors).toEqual([
      { field: 'display_name', message: 'must be a string' },
      { field: 'send_activation', message: 'must be a boolean' },
    ]);
    const list = await api.call('/v2/users?limit=1&limit=2', { token });
    expect(expectProblem(list, 400, 'validation_failed').errors).toEqual([
      { field: 'limit', message: 'must be a number' },
    ]);
    // Only decimal digits: Number() would read 0x10 as 16.
    const hex = await api.call('/v2/audit/events?limit=0x10', { token });
    expect(expectProblem(hex, 400, 'validation_failed').errors).toEqual([
      { field: 'limit', message: 'must be a number' },
    ]);
  });

  it('refuses a password login whose username is longer than any login name as wrong credentials, not a 500', async () => {
    // 1,000 random CJK characters (within the gateway's 1,024 a parameter), 3 bytes each and hardly
    // compressible: an unknown username's lockout key was more than Postgres indexes.
    const username = `${Array.from({ length: 1000 }, () => String.fromCodePoint(0x4e00 + randomInt(20_000))).join('')}@example.test`;
    const grant = await api.tokenRequest({ grant_type: 'password', username, password: 'whatever-1' });
    expect(expectProblem(grant, 400, 'invalid_grant').error).toBe('invalid_grant');
  });
});
