import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';

import { KEY_WITHDRAWAL_TOPIC, withdrawnKidsOf } from '@acct/access-token';
import { noticeSubject } from '@acct/revocation';
import { connect } from 'nats';

import { loadAuthConfig } from './config';
import { KeyEncryption } from './keys/key-encryption';
import { createTestDatabase, TestDatabase } from './test-support/test-database';

const root = path.resolve(__dirname, '../../..');

interface CliResult {
  code: number;
  stdout: string;
  json: Record<string, unknown>;
}

describe('auth CLI (child processes, real Postgres)', () => {
  let database: TestDatabase;
  /** This run's installation, so that its notices reach no other's processes. */
  const keyPrefix = `cli-spec-${process.pid}-${Date.now()}:`;

  const cli = (...args: string[]) => cliWith({ AUTH_DATABASE_URL: database.url }, ...args);
  const cliWith = async (env: Record<string, string>, ...args: string[]): Promise<CliResult> => {
    const run = promisify(execFile)(process.execPath, ['-r', './tools/run-ts.cjs', 'apps/auth/src/cli.ts', ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'info', REDIS_KEY_PREFIX: keyPrefix, ...env },
    });
    const { stdout, code } = await run.then(
      ({ stdout }) => ({ stdout, code: 0 }),
      (error: { stdout: string; code: number }) => ({ stdout: error.stdout, code: error.code }),
    );
    expect(stdout.endsWith('\n')).toBe(true);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    return { code, stdout, json: JSON.parse(stdout) as Record<string, unknown> };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('ensure-bootstrap-client prints the same client every time, a secret only the first time', async () => {
    const org = '44444444-2222-4333-8444-555555555555';
    const first = await cli('ensure-bootstrap-client', '--org-id', org);
    expect(first.code).toBe(0);
    expect(first.json).toEqual({ client_id: expect.any(String), client_secret: expect.stringMatching(/^[\w-]{43}$/) });
    const second = await cli('ensure-bootstrap-client', '--org-id', org);
    expect(second.json).toEqual({ client_id: first.json.client_id, client_secret: null });
    const rotated = await cli('ensure-bootstrap-client', '--org-id', org, '--rotate-secret');
    expect(rotated.json.client_id).toBe(first.json.client_id);
    expect(rotated.json.client_secret).toEqual(expect.any(String));
    expect(rotated.json.client_secret).not.toBe(first.json.client_secret);
  });

  it('ensure-bootstrap-client run twice at once creates one client', async () => {
    const org = '55555555-2222-4333-8444-555555555555';
    const [a, b] = await Promise.all([
      cli('ensure-bootstrap-client', '--org-id', org),
      cli('ensure-bootstrap-client', '--org-id', org),
    ]);
    expect(a.json.client_id).toBe(b.json.client_id);
    expect([a.json.client_secret, b.json.client_secret].filter((secret) => secret !== null)).toHaveLength(1);
  });

  it('create-client prints a new client and its secret', async () => {
    const { code, json } = await cli(
      'create-client',
      '--org-id',
      '44444444-2222-4333-8444-555555555555',
      '--name',
      'ci',
      '--scopes',
      'users:read system:read',
      '--roles',
      'viewer',
    );
    expect(code).toBe(0);
    expect(json).toEqual({ client_id: expect.any(String), client_secret: expect.stringMatching(/^[\w-]{43}$/) });
    const [row] = await database.query('SELECT roles, scopes, grant_types FROM clients WHERE id = $1', [
      json.client_id,
    ]);
    expect(row).toEqual({
      roles: ['viewer'],
      scopes: ['system:read', 'users:read'],
      grant_types: ['client_credentials'],
    });
  });

  it('create-client refuses unknown scopes with a JSON error and exit code 1', async () => {
    const { code, json } = await cli(
      'create-client',
      '--org-id',
      '44444444-2222-4333-8444-555555555555',
      '--name',
      'x',
      '--scopes',
      'root:all',
    );
    expect(code).toBe(1);
    expect(json).toMatchObject({
      error: 'validation_failed',
      errors: [{ field: 'scopes', message: expect.stringContaining('root:all') }],
    });
  });

  it('create-client registers a public client for the browser flow; list, rotate and delete manage clients', async () => {
    const org = '7b7b7b7b-2222-4333-8444-555555555555';
    const app = await cli(
      ...['create-client', '--org-id', org, '--name', 'spa', '--type', 'public'],
      ...[
        '--grant-types',
        'authorization_code,refresh_token',
        '--redirect-uris',
        'https://spa.example/cb,http://127.0.0.1/cb',
      ],
      ...['--scopes', 'users:read'],
    );
    expect(app).toMatchObject({ code: 0, json: { client_id: expect.any(String), client_secret: null } });
    const server = await cli('create-client', '--org-id', org, '--name', 'server', '--scopes', 'users:read');
    const listed = await cli('list-clients', '--org-id', org);
    expect(listed.json).toEqual({
      clients: [
        {
          client_id: app.json.client_id,
          name: 'spa',
          type: 'public',
          grant_types: ['authorization_code', 'refresh_token'],
          redirect_uris: ['https://spa.example/cb', 'http://127.0.0.1/cb'],
          scopes: ['users:read'],
          roles: ['viewer'],
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
        expect.objectContaining({
          client_id: server.json.client_id,
          type: 'confidential',
          grant_types: ['client_credentials'],
        }),
      ],
    });
    const rotated = await cli('rotate-client-secret', '--client-id', String(server.json.client_id));
    expect(rotated.json).toEqual({
      client_id: server.json.client_id,
      client_secret: expect.stringMatching(/^[\w-]{43}$/),
    });
    expect(rotated.json.client_secret).not.toBe(server.json.client_secret);
    expect((await cli('rotate-client-secret', '--client-id', String(app.json.client_id))).json.error).toBe(
      'validation_failed',
    );
    expect((await cli('delete-client', '--client-id', String(server.json.client_id))).json).toEqual({
      client_id: server.json.client_id,
      deleted: true,
    });
    const missing = await cli('delete-client', '--client-id', String(server.json.client_id));
    expect(missing).toMatchObject({ code: 1, json: { error: 'not_found' } });
    expect(((await cli('list-clients', '--org-id', org)).json.clients as unknown[]).length).toBe(1);
  });

  it('create-client refuses a redirect URI that is neither https nor loopback http', async () => {
    const { code, json } = await cli(
      ...['create-client', '--org-id', '55555555-2222-4333-8444-555555555555', '--name', 'x', '--type', 'public'],
      ...['--grant-types', 'authorization_code', '--redirect-uris', 'http://spa.example/cb', '--scopes', 'users:read'],
    );
    expect(code).toBe(1);
    expect(json).toMatchObject({ error: 'validation_failed', errors: [{ field: 'redirect_uris' }] });
  });

  it('rotate-signing-key prints the new kid, which becomes the only active key', async () => {
    const first = await cli('rotate-signing-key');
    const second = await cli('rotate-signing-key');
    expect(first.json).toEqual({ kid: expect.any(String) });
    expect(second.json.kid).not.toBe(first.json.kid);
    const active = await database.query<{ kid: string }>('SELECT kid FROM signing_keys WHERE retired_at IS NULL');
    expect(active).toEqual([{ kid: second.json.kid }]);
  });

  it('rotate-signing-key --withdraw-old leaves only the new key, published or not', async () => {
    await cli('rotate-signing-key');
    const withdrawn = await cli('rotate-signing-key', '--withdraw-old');
    expect(withdrawn.json).toEqual({ kid: expect.any(String) });
    expect(await database.query<{ kid: string }>('SELECT kid FROM signing_keys')).toEqual([
      { kid: withdrawn.json.kid },
    ]);
  });

  it('reseal-secrets moves the signing keys and TOTP secrets under a new AUTH_KEY_ENCRYPTION_KEY, naming what it cannot read', async () => {
    const own = await createTestDatabase();
    try {
      const [oldKey, newKey, strayKey] = [1, 2, 3].map(() => randomBytes(32).toString('base64'));
      const underOld = { AUTH_DATABASE_URL: own.url, AUTH_KEY_ENCRYPTION_KEY: oldKey };
      const changing = { ...underOld, AUTH_KEY_ENCRYPTION_KEY: newKey, AUTH_KEY_ENCRYPTION_KEY_PREVIOUS: oldKey };
      const { kid } = (await cliWith(underOld, 'rotate-signing-key')).json as { kid: string };
      const secret = 'JBSWY3DPEHPK3PXP';
      const [user, stray] = [randomUUID(), randomUUID()];
      const totp = (key: string, userId: string) => new KeyEncryption(key).encrypt(secret, `mfa-totp:${userId}`);
      await own.query('INSERT INTO mfa_totp (user_id, secret, created_at) VALUES ($1, $2, now()), ($3, $4, now())', [
        user,
        totp(oldKey, user),
        stray,
        totp(strayKey, stray),
      ]);

      // A factor under a third key is named, and everything else is moved all the same.
      const partial = await cliWith(changing, 'reseal-secrets');
      expect(partial).toMatchObject({ code: 1, json: { error: 'unreadable_secrets' } });
      expect(partial.json.message).toContain(`the TOTP secret of user ${stray}`);
      const newOnly = new KeyEncryption(newKey);
      const keys = await own.query<{ kid: string; private_key_pem: string }>(
        'SELECT kid, private_key_pem FROM signing_keys',
      );
      expect(keys.map((key) => key.kid)).toContain(kid);
      for (const key of keys) expect(newOnly.decrypt(key.private_key_pem, key.kid)).toContain('PRIVATE KEY');
      const [factor] = await own.query<{ secret: string }>('SELECT secret FROM mfa_totp WHERE user_id = $1', [user]);
      expect(newOnly.decrypt(factor.secret, `mfa-totp:${user}`)).toBe(secret);

      // Run again once the stray factor is gone, it has nothing left to move; the new key alone signs.
      await own.query('DELETE FROM mfa_totp WHERE user_id = $1', [stray]);
      expect(await cliWith(changing, 'reseal-secrets')).toMatchObject({
        code: 0,
        json: { signing_keys: 0, totp_secrets: 0 },
      });
      const { AUTH_KEY_ENCRYPTION_KEY_PREVIOUS: _dropped, ...changed } = changing;
      expect((await cliWith(changed, 'rotate-signing-key')).code).toBe(0);
    } finally {
      await own.drop();
    }
  });

  it('rotate-signing-key --withdraw-old announces the withdrawn kids to every running process', async () => {
    const before = await cli('rotate-signing-key');
    const nats = await connect({ servers: loadAuthConfig({ AUTH_DATABASE_URL: database.url }).NATS_URL });
    try {
      const notices = nats.subscribe(`${noticeSubject(keyPrefix)}.${KEY_WITHDRAWAL_TOPIC}`, {
        max: 1,
        timeout: 10_000,
      });
      await nats.flush();
      await cli('rotate-signing-key', '--withdraw-old');
      for await (const notice of notices) expect(withdrawnKidsOf(notice.string())).toContain(before.json.kid);
    } finally {
      await nats.close();
    }
  });

  it('answers a usage error with exit code 2', async () => {
    expect((await cli('no-such-command')).code).toBe(2);
    const missing = await cli('ensure-bootstrap-client');
    expect(missing).toMatchObject({ code: 2, json: { error: 'usage', message: '--org-id is required' } });
  });
});
