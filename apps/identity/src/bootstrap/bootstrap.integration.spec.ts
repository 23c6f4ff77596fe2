import { execFile } from 'node:child_process';
import path from 'node:path';

import { scopesOfRoles } from '@acct/access-token';

import { PrismaService } from '../prisma/prisma.service';
import { callerOf, domainFailure, IdentityHarness } from '../testing/identity-harness';
import { REPOSITORY_ROOT } from '../testing/spec-database';
import { CreateUserService } from '../users/create-user.service';
import { createBootstrapService } from './bootstrap.command';

jest.setTimeout(90_000);

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('bootstrap against Postgres', () => {
  let identity: IdentityHarness;
  let prisma: PrismaService;

  /** The CLI as an operator runs it: a separate process, no gRPC server anywhere. */
  const cli = (...args: string[]) =>
    new Promise<CliRun>((resolve) => {
      execFile(
        process.execPath,
        [
          '-r',
          path.join(REPOSITORY_ROOT, 'tools/run-ts.cjs'),
          path.join(REPOSITORY_ROOT, 'apps/identity/src/cli.ts'),
          ...args,
        ],
        {
          cwd: REPOSITORY_ROOT,
          env: { ...process.env, IDENTITY_DATABASE_URL: identity.database.url, LOG_LEVEL: 'info' },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    prisma = identity.get(PrismaService);
  });

  afterAll(async () => {
    await identity?.close();
  });

  it('creates an org and its active admin, and a second run changes nothing and prints the same ids', async () => {
    const first = await cli(
      'bootstrap',
      '--org',
      'Initech',
      '--email',
      'Root@Initech.example',
      '--password',
      'first password',
    );
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const ids = JSON.parse(lines[0] ?? '') as { org_id: string; admin_user_id: string };
    expect(Object.keys(ids)).toEqual(['org_id', 'admin_user_id']);

    const admin = await prisma.user.findUniqueOrThrow({ where: { id: ids.admin_user_id } });
    expect(admin).toMatchObject({
      orgId: ids.org_id,
      email: 'Root@Initech.example',
      emailNormalized: 'root@initech.example',
      status: 'active',
      roles: ['admin'],
    });
    expect(admin.activatedAt).not.toBeNull();
    expect(await prisma.org.findUniqueOrThrow({ where: { id: ids.org_id } })).toMatchObject({ name: 'Initech' });

    const second = await cli(
      'bootstrap',
      '--org',
      'Initech',
      '--email',
      'root@initech.example',
      '--password',
      'other password',
    );
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const after = await prisma.user.findUniqueOrThrow({ where: { id: ids.admin_user_id } });
    expect(after.passwordHash).toBe(admin.passwordHash);
    expect(after.updatedAt).toEqual(admin.updatedAt);
    expect(await prisma.org.count({ where: { name: 'Initech' } })).toBe(1);
    expect(await prisma.user.count({ where: { orgId: ids.org_id } })).toBe(1);
  });

  it('refuses, with exit 1 and a clear message, an e-mail that belongs to another org', async () => {
    await cli('bootstrap', '--org', 'Hooli', '--email', 'gavin@hooli.example', '--password', 'hooli password');
    const run = await cli(
      'bootstrap',
      '--org',
      'Pied Piper',
      '--email',
      'GAVIN@hooli.example',
      '--password',
      'piper password',
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('already belongs to a user of another organization');
    expect(await prisma.org.count({ where: { name: 'Pied Piper' } })).toBe(0);
  });

  it('refuses an e-mail whose admin in the org never activated its account, and leaves that user as it was', async () => {
    const service = createBootstrapService(prisma, identity.config, identity.clock);
    const { orgId, adminUserId } = await service.bootstrap({
      orgName: 'Umbrella',
      email: 'first@umbrella.example',
      password: 'first password',
    });
    const admin = callerOf('user', adminUserId, orgId, scopesOfRoles(['admin']), ['admin']);
    const { user } = await identity.get(CreateUserService).create(admin, {
      email: 'second@umbrella.example',
      displayName: 'Second',
      roles: ['admin'],
      sendActivation: false,
      requestFingerprint: '',
    });

    // Contract §0: the bootstrap answers with an active admin; this one cannot sign in (pending, and
    // the password given here was never its password).
    const refusal = await domainFailure(
      service.bootstrap({ orgName: 'Umbrella', email: 'Second@umbrella.example', password: 'second password' }),
    );
    expect(refusal.code).toBe('email_taken');
    expect(refusal.detail).toContain('not activated');
    expect(await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({
      status: 'pending',
      passwordHash: null,
    });
  });

  it('checks the inputs with the rules of CreateUser and lists every broken one (exit 1)', async () => {
    const run = await cli('bootstrap', '--org', ' ', '--email', 'not an e-mail', '--password', 'short');
    expect(run.code).toBe(1);
    for (const option of ['--org', '--email', '--password']) expect(run.stderr).toContain(option);
  });

  it('answers a usage error with exit 2', async () => {
    expect((await cli('bootstrap', '--org', 'x')).code).toBe(2);
    expect((await cli('frobnicate')).code).toBe(2);
  });

  it('ends up with one org and one admin when bootstraps race', async () => {
    const service = createBootstrapService(prisma, identity.config, identity.clock);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        service.bootstrap({ orgName: 'Racers', email: 'admin@racers.example', password: 'racing password' }),
      ),
    );
    expect(new Set(results.map((result) => `${result.orgId}/${result.adminUserId}`)).size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(await prisma.user.count({ where: { emailNormalized: 'admin@racers.example' } })).toBe(1);
  });
});
