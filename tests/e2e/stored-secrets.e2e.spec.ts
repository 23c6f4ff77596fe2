import { createHash } from 'node:crypto';

import { Bootstrap, request, TestStack } from '@acct/testing';
import pg from 'pg';

const ADMIN_PASSWORD = 'stored-secrets-admin-1';
const NEW_PASSWORD = 'Winter2026!';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with sorted keys and undefined members left out: what anyone can compute from a known body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What is kept at rest must not let someone who reads a database (a leaked backup, say) test password
 * guesses faster than argon2 allows: a plain SHA-256 of a body that carries the password would.
 */
describe('secrets at rest', () => {
  let stack: TestStack;
  let adminToken: string;

  beforeAll(async () => {
    stack = await TestStack.start({ apps: ['identity', 'auth', 'platform', 'gateway'] });
    stack.cli<Bootstrap>(
      'bootstrap',
      '--org',
      'at-rest',
      '--email',
      'admin@at-rest.test',
      '--password',
      ADMIN_PASSWORD,
    );
    const login = await request<{ access_token: string }>(stack.url('/v2/auth/token'), {
      body: { grant_type: 'password', username: 'admin@at-rest.test', password: ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    adminToken = login.body.access_token;
  });

  afterAll(async () => {
    await stack?.close();
  });

  it("keeps no unkeyed digest of a new user's password in its Idempotency-Key record (no offline password oracle)", async () => {
    const body = { email: 'ada@at-rest.test', display_name: 'Ada', password: NEW_PASSWORD, send_activation: false };
    const created = await request(stack.url('/v2/users'), {
      token: adminToken,
      body,
      headers: { 'idempotency-key': 'create-ada' },
    });
    expect(created.status).toBe(201);

    const identity = new pg.Client({ connectionString: stack.env.IDENTITY_DATABASE_URL });
    await identity.connect();
    let stored: string;
    try {
      const { rows } = await identity.query<{ fingerprint: string }>(
        "SELECT fingerprint FROM idempotency_keys WHERE key = 'create-ada'",
      );
      expect(rows).toHaveLength(1);
      stored = rows[0].fingerprint;
    } finally {
      await identity.end();
    }

    // A reader of the database knows the user's e-mail and name and the published fingerprint recipe
    // (method, path, canonical body; the service's own digest over the request as it arrived), and
    // tries candidate passwords at SHA-256 speed, without argon2's cost.
    const digestsFor = (password: string) => {
      const gateway = sha256(`POST /v2/users\n${canonical({ ...body, password })}`);
      const arrived = {
        email: body.email,
        displayName: body.display_name,
        password,
        roles: [],
        sendActivation: body.send_activation,
      };
      return [
        gateway,
        sha256(canonical({ operation: 'identity.v1.CreateUser', request: arrived, requestFingerprint: gateway })),
      ];
    };
    const confirmed = ['123456', 'password', 'Summer2026!', NEW_PASSWORD, 'Winter2027!'].filter((guess) =>
      digestsFor(guess).includes(stored),
    );
    expect(confirmed).toEqual([]);

    // The record still does its job: the same request is replayed, another password is another request.
    const replay = await request(stack.url('/v2/users'), {
      token: adminToken,
      body,
      headers: { 'idempotency-key': 'create-ada' },
    });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const other = await request<{ code: string }>(stack.url('/v2/users'), {
      token: adminToken,
      body: { ...body, password: 'Another-password-9' },
      headers: { 'idempotency-key': 'create-ada' },
    });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
  });
});
