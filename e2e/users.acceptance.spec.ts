import { randomUUID } from 'node:crypto';

import { call, expectProblem, issue, newOrg, raiseLimit, uniqueEmail, User } from './support/client';

const USER_FIELDS = ['created_at', 'display_name', 'email', 'id', 'roles', 'status'];

/** Interface §2.1 / §4.1, contract §3: POST /v2/users, GET /v2/users/{id}, GET /v2/users/me. */
describe('users', () => {
  let org: Awaited<ReturnType<typeof newOrg>>;
  let other: Awaited<ReturnType<typeof newOrg>>;

  const create = (json: unknown, options: { token?: string; headers?: Record<string, string> } = {}) =>
    call<User>('/v2/users', { token: options.token ?? org.clientToken, json, headers: options.headers });

  /** A user of `org` with `role`, active, and its own token. */
  const member = async (role: string) => {
    const email = uniqueEmail(role);
    const created = await create({ email, display_name: role, roles: [role], send_activation: false });
    const reset = await call<{ token: string }>(`/v2/users/${created.body.id}/reset-password`, {
      token: org.clientToken,
      json: { send_email: false },
    });
    await call('/v2/users/me/password', { token: reset.body.token, json: { password: 'member-password-1' } });
    const set = await issue({ grant_type: 'password', username: email, password: 'member-password-1' });
    return { user: created.body, token: set.access_token };
  };

  beforeAll(async () => {
    [org, other] = [await newOrg('users'), await newOrg('others')];
    raiseLimit(org.org_id, 'users.write');
    raiseLimit(org.org_id, 'users.read');
  });

  describe('POST /v2/users', () => {
    it('creates a pending user: 201, Location, exactly the six fields, the defaults applied', async () => {
      const email = uniqueEmail('ada');
      const before = Date.now();
      const answer = await create({ email: `  ${email.toUpperCase()}  `, display_name: '  Ada Lovelace ' });
      expect(answer.status).toBe(201);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      const user = answer.body;
      expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
      expect(user).toEqual({
        id: expect.stringMatching(/\S/),
        email: expect.any(String),
        display_name: 'Ada Lovelace',
        status: 'pending',
        roles: ['member'],
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
      });
      expect(user.email.toLowerCase()).toBe(email);
      expect(new Date(user.created_at).getTime()).toBeGreaterThanOrEqual(before - 60_000);
      expect(answer.headers.get('location')).toBe(`/v2/users/${user.id}`);
      expect(answer.headers.get('idempotent-replayed')).toBeNull();
    });

    it('takes every field: password, roles, org_id (its own), send_activation, profile; returns none of the write-only ones', async () => {
      const answer = await create({
        email: uniqueEmail('full'),
        display_name: '李雷',
        password: 'initial-password-1',
        roles: ['viewer', 'member'],
        org_id: org.org_id,
        send_activation: false,
        profile: { locale: 'en-GB', timezone: 'Europe/London' },
      });
      expect(answer.status).toBe(201);
      expect(Object.keys(answer.body).sort()).toEqual(USER_FIELDS);
      expect(answer.body.status).toBe('pending');
      expect([...answer.body.roles].sort()).toEqual(['member', 'viewer']);
      expect(answer.body.display_name).toBe('李雷');
      expect(answer.text).not.toContain('initial-password-1');
    });

    it('refuses every broken field at once with 400 validation_failed and errors[] by dotted path, creating nothing', async () => {
      const email = `bad-${randomUUID()}`;
      const answer = await create({
        email,
        display_name: 'x'.repeat(65),
        password: 'short',
        roles: ['owner'],
        send_activation: 'yes',
        profile: { locale: 'not a locale!', timezone: 'Mars/Olympus' },
        nickname: 'unknown field',
      });
      const problem = expectProblem(answer, 400, 'validation_failed');
      const fields = (problem.errors ?? []).map((error) => error.field);
      for (const field of [
        'email',
        'display_name',
        'password',
        'send_activation',
        'profile.locale',
        'profile.timezone',
        'nickname',
      ]) {
        expect(fields).toContain(field);
      }
      expect(fields.some((field) => field.startsWith('roles'))).toBe(true);
      for (const error of problem.errors ?? [])
        expect(error).toEqual({ field: expect.any(String), message: expect.any(String) });
    });

    it('applies the contract’s rules one by one', async () => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ['display_name', { display_name: '' }],
        ['display_name', { display_name: '   ' }],
        ['display_name', { display_name: 'tab\there' }],
        ['email', { email: `${'a'.repeat(250)}@x.test` }],
        ['password', { password: 'p'.repeat(129) }],
        ['roles', { roles: [] }],
        ['roles', { roles: ['member', 'member'] }],
        ['email', { email: undefined }],
        ['display_name', { display_name: undefined }],
      ];
      for (const [field, change] of cases) {
        const body = { email: uniqueEmail('rule'), display_name: 'Rule', ...change };
        const problem = expectProblem(await create(body), 400, 'validation_failed');
        expect({ change, fields: problem.errors?.map((error) => error.field.split('.')[0]) }).toEqual({
          change,
          fields: expect.arrayContaining([field]),
        });
      }
      expect((await create({ email: uniqueEmail('edge'), display_name: 'x'.repeat(64) })).status).toBe(201);
      expect((await create({ email: uniqueEmail('edge'), display_name: '😀'.repeat(64) })).status).toBe(201);
    });

    it('names a broken e-mail once in errors[], however many of its rules it breaks', async () => {
      for (const email of ['ada@пример.рф', `${'a'.repeat(65)}@exa mple.test`]) {
        const problem = expectProblem(await create({ email, display_name: 'Ada' }), 400, 'validation_failed');
        expect({ email, errors: problem.errors }).toEqual({
          email,
          errors: [{ field: 'email', message: 'must be a valid e-mail address' }],
        });
      }
    });

    it('answers a body that is not a JSON object with 400 malformed_body, and a non-JSON media type with 415', async () => {
      expectProblem(
        await call('/v2/users', {
          token: org.clientToken,
          raw: '{"email":',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'malformed_body',
      );
      expectProblem(await create([1, 2]), 400, 'malformed_body');
      expectProblem(
        await call('/v2/users', {
          token: org.clientToken,
          raw: 'email=a@b.test',
          headers: { 'content-type': 'text/plain' },
        }),
        415,
        'unsupported_media_type',
      );
    });

    it('refuses a duplicate e-mail, in any case, with 409 email_taken', async () => {
      const email = uniqueEmail('dup');
      expect((await create({ email, display_name: 'First' })).status).toBe(201);
      expectProblem(await create({ email: email.toUpperCase(), display_name: 'Second' }), 409, 'email_taken');
      // Globally unique: another org cannot take it either.
      expectProblem(await create({ email, display_name: 'Third' }, { token: other.clientToken }), 409, 'email_taken');
    });

    it('replays the same Idempotency-Key with the stored answer and Idempotent-Replayed: true, creating one user', async () => {
      const key = randomUUID();
      const body = { email: uniqueEmail('idem'), display_name: 'Idem' };
      const first = await create(body, { headers: { 'idempotency-key': key } });
      const second = await create(body, { headers: { 'idempotency-key': key } });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      // A new key for the same body: the e-mail is taken by the first request, so only one user exists.
      expectProblem(await create(body, { headers: { 'idempotency-key': randomUUID() } }), 409, 'email_taken');
    });

    it('refuses the same Idempotency-Key with another body with 422 idempotency_key_reused', async () => {
      const key = randomUUID();
      expect(
        (await create({ email: uniqueEmail('k1'), display_name: 'K1' }, { headers: { 'idempotency-key': key } }))
          .status,
      ).toBe(201);
      const reused = await create(
        { email: uniqueEmail('k2'), display_name: 'K2' },
        { headers: { 'idempotency-key': key } },
      );
      expectProblem(reused, 422, 'idempotency_key_reused');
    });

    it('scopes keys per caller: another caller’s same key is a new request', async () => {
      const key = randomUUID();
      const email = uniqueEmail('scoped');
      expect((await create({ email, display_name: 'A' }, { headers: { 'idempotency-key': key } })).status).toBe(201);
      const admin = await create(
        { email, display_name: 'A' },
        { token: org.admin.access_token, headers: { 'idempotency-key': key } },
      );
      expectProblem(admin, 409, 'email_taken');
    });

    it('refuses a malformed Idempotency-Key with validation_failed', async () => {
      const answer = await create(
        { email: uniqueEmail('key'), display_name: 'Key' },
        { headers: { 'idempotency-key': 'x'.repeat(256) } },
      );
      expectProblem(answer, 400, 'validation_failed');
    });

    it('needs a bearer token with users:write: 401 unauthenticated, 403 insufficient_scope (RFC 6750 headers)', async () => {
      const none = await call('/v2/users', { json: { email: uniqueEmail('anon'), display_name: 'Anon' } });
      expectProblem(none, 401, 'unauthenticated');
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const forged = await create(
        { email: uniqueEmail('forged'), display_name: 'F' },
        { token: 'eyJhbGciOiJub25lIn0.e30.' },
      );
      expectProblem(forged, 401, 'unauthenticated');
      expect(forged.headers.get('www-authenticate')).toContain('error="invalid_token"');
      const readOnly = await issue({
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
        scope: 'users:read',
      });
      const narrow = await create(
        { email: uniqueEmail('narrow'), display_name: 'N' },
        { token: readOnly.access_token },
      );
      expectProblem(narrow, 403, 'insufficient_scope');
      expect(narrow.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="users:write"/);
    });

    it('refuses another org’s org_id with 403 forbidden, and user creation to a member with 403 insufficient_scope', async () => {
      expectProblem(
        await create({ email: uniqueEmail('cross'), display_name: 'Cross', org_id: other.org_id }),
        403,
        'forbidden',
      );
      // Only admins hold users:write, so a member (or a viewer) cannot reach the role rule: the scope
      // gate refuses it first, and no user is created either way.
      const { token } = await member('member');
      const escalation = await create({ email: uniqueEmail('esc'), display_name: 'Esc', roles: ['admin'] }, { token });
      expectProblem(escalation, 403, 'insufficient_scope');
    });
  });

  describe('GET /v2/users/{id} and /v2/users/me', () => {
    it('reads a user of the same org by id with exactly the six fields', async () => {
      const created = await create({ email: uniqueEmail('read'), display_name: 'Read', roles: ['viewer'] });
      const answer = await call<User>(`/v2/users/${created.body.id}`, { token: org.clientToken });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(created.body);
    });

    it('answers /me with the caller, and its roles', async () => {
      const me = await call<User>('/v2/users/me', { token: org.admin.access_token });
      expect(me.status).toBe(200);
      expect(Object.keys(me.body).sort()).toEqual(USER_FIELDS);
      expect(me.body).toEqual(
        expect.objectContaining({ id: org.admin_user_id, email: org.adminEmail, status: 'active', roles: ['admin'] }),
      );
      const viewer = await member('viewer');
      const viewerMe = await call<User>('/v2/users/me', { token: viewer.token });
      expect(viewerMe.body).toEqual(
        expect.objectContaining({ id: viewer.user.id, roles: ['viewer'], status: 'active' }),
      );
    });

    it('answers 404 not_found for an unknown id and for another org’s user (no existence oracle)', async () => {
      expectProblem(await call(`/v2/users/${randomUUID()}`, { token: org.clientToken }), 404, 'not_found');
      const theirs = await call<User>(`/v2/users/${other.admin_user_id}`, { token: org.clientToken });
      expectProblem(theirs, 404, 'not_found');
    });

    it('needs users:read: 401 without a token, 403 insufficient_scope with a token lacking it', async () => {
      expectProblem(await call('/v2/users/me'), 401, 'unauthenticated');
      const systemOnly = await issue({
        grant_type: 'password',
        username: org.adminEmail,
        password: org.adminPassword,
        scope: 'system:read',
      });
      expectProblem(await call('/v2/users/me', { token: systemOnly.access_token }), 403, 'insufficient_scope');
    });

    it('answers PUT /v2/users/{id} with 405 method_not_allowed and Allow (GET, HEAD, PATCH and DELETE are its methods)', async () => {
      const answer = await call(`/v2/users/${org.admin_user_id}`, { method: 'PUT', token: org.clientToken });
      expectProblem(answer, 405, 'method_not_allowed');
      const allowed = (answer.headers.get('allow') ?? '').split(',').map((method) => method.trim());
      expect(allowed.sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH']);
    });
  });
});
