import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { repositoryRoot, TestStack } from '@acct/testing';
import pg from 'pg';

/** `npm run cli -- …` as an operator runs it: exit status, stdout, stderr. */
function cli(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [path.join(repositoryRoot, 'tools/cli.mjs'), ...args], {
    cwd: repositoryRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const COMMANDS = [
  'bootstrap',
  'create-client',
  'list-clients',
  'rotate-client-secret',
  'delete-client',
  'rotate-signing-key',
  'reseal-secrets',
  'set-rate-limit',
  'set-quota',
];

describe('the operator CLI behaves like one', () => {
  it.each([['--help'], ['-h'], ['help']])('%s lists every command with its options and exits 0', (flag) => {
    const { status, stdout, stderr } = cli([flag]);
    expect(status).toBe(0);
    expect(stderr).toBe('');
    for (const command of COMMANDS) expect(stdout).toMatch(new RegExp(`^  ${command}( |$)`, 'm'));
    expect(stdout).toContain('bootstrap --org <name> --email <admin e-mail> --password <password>');
  });

  it("<command> --help shows that command's usage and exits 0 without running it", () => {
    const { status, stdout } = cli(['set-quota', '--help'], {
      PLATFORM_DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/x',
    });
    expect(status).toBe(0);
    expect(stdout).toMatch(/^usage: npm run cli -- set-quota --org-id <uuid> --dimension/);
  });

  it.each([
    [
      ['set-quota', '--org-id', 'o', '--dimension', 'api', '--name', 'n', '--limit', '1', '--bogus'],
      "Unknown option '--bogus'",
    ],
    [['create-client', '--org-id', 'o'], 'missing --name, --scopes'],
    [['bootstrap', '--email', 'a@b.c', '--password', 'pw', '--org'], "Option '--org <value>' argument missing"],
    [['rotate-signing-key', 'now'], "Unexpected argument 'now'"],
    [['delete-client', '--client-id', 'a', '--client-id', 'b'], '--client-id is given more than once'],
    [['set-rate-limits'], 'unknown command "set-rate-limits"'],
    [[], 'a command is required'],
  ])('refuses %j naming what is wrong, with exit 2 and the usage', (args, message) => {
    const { status, stdout, stderr } = cli(args);
    expect(status).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')[0]).toContain(message);
    expect(stderr).toContain('usage: npm run cli -- ');
  });

  it("refuses an unknown option of a service's own CLI too, naming it, with exit 2", () => {
    const result = spawnSync(
      process.execPath,
      ['-r', './tools/run-ts.cjs', 'apps/platform/src/cli.ts', 'set-quota', '--org-id', 'o', '--bogus'],
      { cwd: repositoryRoot, encoding: 'utf8' },
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("Unknown option '--bogus'");
  });

  describe('against real databases', () => {
    let stack: TestStack;

    beforeAll(async () => {
      stack = await TestStack.start({ apps: [] });
    });

    afterAll(async () => {
      await stack?.close();
    });

    it('runs a command through every service it needs, as text or as one JSON line', () => {
      const args = ['bootstrap', '--org', 'cli-org', '--email', 'admin@cli.test', '--password', 'long enough password'];
      const json = cli([...args, '--json'], stack.env);
      expect(json.status).toBe(0);
      const answer = JSON.parse(json.stdout) as Record<string, unknown>;
      expect(answer).toEqual({
        org_id: expect.any(String),
        admin_user_id: expect.any(String),
        client_id: expect.any(String),
        client_secret: expect.any(String),
      });
      const text = cli(args, stack.env);
      expect(text.status).toBe(0);
      expect(text.stdout).toContain(`org_id         ${String(answer.org_id)}`);
      expect(text.stdout).toContain('client_secret  (unchanged;');
    });

    it('passes a value that starts with a dash, given as --name=-value, to the service unchanged', () => {
      // node:util parseArgs refuses `--name -beta` as ambiguous and tells the operator to write
      // `--name=-beta`: the service's own CLI must then get the value, not a second ambiguous pair.
      const orgId = crypto.randomUUID();
      const created = cli(
        ['create-client', '--org-id', orgId, '--name=-beta', '--scopes', 'users:read', '--json'],
        stack.env,
      );
      expect({ status: created.status, stderr: created.stderr }).toEqual({ status: 0, stderr: '' });
      const listed = cli(['list-clients', '--org-id', orgId, '--json'], stack.env);
      expect(listed.status).toBe(0);
      const { clients } = JSON.parse(listed.stdout) as { clients: Array<{ name: string }> };
      expect(clients.map((client) => client.name)).toEqual(['-beta']);
    });

    it.each([
      [
        'create-client with a plain-http redirect URI',
        ['create-client', '--name', 'My SPA', '--type', 'public', '--grant-types', 'authorization_code'],
        ['--redirect-uris', 'http://app.example/callback', '--scopes', 'users:read'],
        'redirect_uris',
      ],
      ['list-clients of an org id that is no UUID', ['list-clients'], [], 'org_id'],
    ])('refuses %s naming the field and why, not just "invalid fields"', (_, command, rest, field) => {
      // auth's refusals came out as "The request has invalid fields." alone: which field, and what
      // was wrong with it, went to the JSON line on stdout that the CLI drops on a failure.
      const orgId = field === 'org_id' ? 'acme' : crypto.randomUUID();
      const refused = cli([...command, '--org-id', orgId, ...rest], stack.env);
      expect({ status: refused.status, stdout: refused.stdout }).toEqual({ status: 1, stdout: '' });
      expect(refused.stderr).toContain(`"field":"${field}"`);
      expect(refused.stderr).toContain(field === 'org_id' ? 'must be a UUID' : 'must use https');
    });

    it('lists an org whose clients fill more than a megabyte of JSON, all of them', async () => {
      // The CLI read each service's answer through spawnSync's default 1 MiB buffer: a longer answer
      // killed the service and the command exited 1 with nothing said (about 3,000 clients).
      const orgId = crypto.randomUUID();
      const db = new pg.Client({ connectionString: stack.env.AUTH_DATABASE_URL });
      await db.connect();
      try {
        await db.query(
          `INSERT INTO clients (id, org_id, name, type, grant_types, scopes, roles, updated_at)
           SELECT gen_random_uuid()::text, $1::uuid, repeat('n', 100), 'confidential',
                  ARRAY['client_credentials'], ARRAY['users:read'], ARRAY['viewer'], now()
           FROM generate_series(1, 5000)`,
          [orgId],
        );
      } finally {
        await db.end();
      }
      const listed = cli(['list-clients', '--org-id', orgId, '--json'], stack.env);
      expect({ status: listed.status, stderr: listed.stderr }).toEqual({ status: 0, stderr: '' });
      expect(listed.stdout.length).toBeGreaterThan(1024 * 1024);
      expect((JSON.parse(listed.stdout) as { clients: unknown[] }).clients).toHaveLength(5000);
    });

    it('answers set-rate-limit with the org and its tiers, snake_case like every other answer', () => {
      const orgId = crypto.randomUUID();
      const args = ['set-rate-limit', '--org-id', orgId, '--group', 'users.read', '--scope', 'per-token'];
      const answer = cli([...args, '--rate-per-minute', '120', '--burst', '5', '--json'], stack.env);
      expect(answer.status).toBe(0);
      const { org_id: answered, tiers } = JSON.parse(answer.stdout) as { org_id: string; tiers: object[] };
      expect(answered).toBe(orgId);
      expect(tiers).toContainEqual({ group: 'users.read', rate_per_minute: 120, burst: 5, scope: 'per-token' });
    });

    it('refuses an --org-id that is no org id, and hex or exponent rates, storing nothing', () => {
      const tier = ['--group', 'users.read', '--scope', 'per-token'];
      const cases = [
        ['set-quota', '--org-id', 'not-a-uuid', '--dimension', 'api', '--name', 'Users', '--limit', '5'],
        ['set-rate-limit', '--org-id', 'acme', ...tier, '--rate-per-minute', '60', '--burst', '10'],
        ['set-rate-limit', '--org-id', crypto.randomUUID(), ...tier, '--rate-per-minute', '0x3c', '--burst', '10'],
        ['set-rate-limit', '--org-id', crypto.randomUUID(), ...tier, '--rate-per-minute', '60', '--burst', '1e1'],
      ];
      for (const args of cases) {
        const refused = cli([...args, '--json'], stack.env);
        expect({ args, refused: refused.status !== 0, stdout: refused.stdout }).toEqual({
          args,
          refused: true,
          stdout: '',
        });
      }
    });

    it.each([
      ['--rate-per-minute', '2147483648'],
      ['--burst', '99999999999'],
    ])('refuses set-rate-limit %s %s, beyond what a tier stores, naming the field', (flag, value) => {
      const orgId = crypto.randomUUID();
      const tier = { '--rate-per-minute': '60', '--burst': '10', [flag]: value };
      const args = ['set-rate-limit', '--org-id', orgId, '--group', 'users.read', '--scope', 'per-token'];
      const refused = cli([...args, ...Object.entries(tier).flat(), '--json'], stack.env);
      expect({ status: refused.status, stdout: refused.stdout }).toEqual({ status: 1, stdout: '' });
      expect(refused.stderr).toContain(`"field":"${flag.slice(2).replaceAll('-', '_')}"`);
    });

    it.each([
      // The gateways get the API requests limit as an integer (2: a third request refused), identity
      // holds Users to it as it is (a third user created): either way not the limit the quota shows.
      ['API requests', '2.5'],
      ['Users', '2.5'],
    ])('refuses set-quota %j --limit %s, a fraction of something counted whole, storing nothing', (name, limit) => {
      const orgId = crypto.randomUUID();
      const args = ['set-quota', '--org-id', orgId, '--dimension', 'api', '--name', name, '--limit', limit];
      const refused = cli([...args, '--json'], stack.env);
      expect({ status: refused.status, stdout: refused.stdout }).toEqual({ status: 1, stdout: '' });
      expect(refused.stderr).toContain('--limit');
      // Gigabytes come in fractions.
      const storage = ['--dimension', 'storage', '--name', 'Object storage', '--limit', '2.5', '--json'];
      const accepted = cli(['set-quota', '--org-id', orgId, ...storage], stack.env);
      expect(accepted.status).toBe(0);
      expect(JSON.parse(accepted.stdout)).toMatchObject({ name: 'Object storage', limit: 2.5 });
    });

    it.each([
      // The gateways get the API requests limit as a 64-bit integer: 10^19 reached them as
      // -8446744073709551616 and 2^64 as 0, so an org given a limit meant as "unlimited" was refused
      // every request; past 2^53 a number is not even the one typed.
      ['API requests', '10000000000000000000'],
      ['API requests', '18446744073709551616'],
      ['Users', '9007199254740993'],
    ])('refuses set-quota %j --limit %s, past the whole numbers a limit can carry, storing nothing', (name, limit) => {
      const orgId = crypto.randomUUID();
      const args = ['set-quota', '--org-id', orgId, '--dimension', 'api', '--name', name, '--limit'];
      const refused = cli([...args, limit, '--json'], stack.env);
      expect({ status: refused.status, stdout: refused.stdout }).toEqual({ status: 1, stdout: '' });
      expect(refused.stderr).toContain('--limit');
      const largest = cli([...args, String(Number.MAX_SAFE_INTEGER), '--json'], stack.env);
      expect(largest.status).toBe(0);
      expect(JSON.parse(largest.stdout)).toMatchObject({ name, limit: Number.MAX_SAFE_INTEGER });
    });

    it.each([' ', '0x10', '1e3'])('refuses set-quota --limit %j instead of storing a number read from it', (limit) => {
      const orgId = crypto.randomUUID();
      const args = ['set-quota', '--org-id', orgId, '--dimension', 'api', '--name', 'API requests', '--limit', limit];
      const refused = cli([...args, '--json'], stack.env);
      expect(refused.status).not.toBe(0);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('--limit');
      // A plain number is what it takes.
      const accepted = cli([...args.slice(0, -1), '250000', '--json'], stack.env);
      expect(accepted.status).toBe(0);
      expect(JSON.parse(accepted.stdout)).toEqual({
        org_id: orgId,
        dimension: 'api',
        name: 'API requests',
        limit: 250000,
      });
    });
  });
});
