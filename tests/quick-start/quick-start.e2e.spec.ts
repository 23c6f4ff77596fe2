import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { valueWithin } from '@acct/observability';
import {
  acceptsConnections,
  APPS,
  DedicatedServer,
  dropDatabases,
  PORT_VARIABLES,
  Ports,
  repositoryRoot,
  SERVICES_WITH_DATABASES,
  sparePorts,
  Up,
  upEnvironment,
} from '@acct/testing';
import nodemailer from 'nodemailer';

interface HealthReport {
  status: string;
  checks: Array<{ component: string; status: string }>;
}

describe('npm run up (tools/up.mjs --json) on spare ports with its own databases', () => {
  const suffix = randomBytes(4).toString('hex');
  const databases = SERVICES_WITH_DATABASES.map((service) => `qs_${suffix}_${service}`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quick-start-'));
  let ports: Ports;
  let env: NodeJS.ProcessEnv;
  let nats: DedicatedServer;
  const natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quick-start-nats-'));
  let up: Up;
  let failing: Up | undefined;

  const gateway = (pathAndQuery: string) => `http://127.0.0.1:${ports.GATEWAY_PORT}${pathAndQuery}`;

  beforeAll(async () => {
    // Its own broker: a shared one may hold other stacks' events for the durable consumers.
    nats = await DedicatedServer.nats(natsDir);
    ports = await sparePorts();
    // Unset S3_ENDPOINT / SMTP_URL: up.mjs then starts its own object store and mail catcher. Only the
    // ports are moved, as a user moves a taken one (`IDENTITY_GRPC_PORT=50061 npm run up`): the services
    // must then call each other there, with no *_GRPC_ADDR given.
    env = upEnvironment({
      ports,
      databasePrefix: `qs_${suffix}`,
      natsUrl: nats.url,
      dataDir,
      extra: { IDENTITY_GRPC_ADDR: undefined, AUTH_GRPC_ADDR: undefined, PLATFORM_GRPC_ADDR: undefined },
    });
    up = new Up(env);
  });

  afterAll(async () => {
    await Promise.all([up?.stop(), failing?.stop()]);
    await dropDatabases(databases);
    await nats?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  it('comes up from one command: health answers 200 healthy, object storage through the local store included', async () => {
    const report = await up.whileRunning(
      'GET /v2/system/health 200 healthy',
      async () => {
        const response = await fetch(gateway('/v2/system/health'));
        const body = (await response.json()) as HealthReport;
        return response.status === 200 && body.status === 'healthy' ? body : undefined;
      },
      200_000,
    );
    expect(report.checks.map((check) => check.component).sort()).toEqual(
      ['auth', 'cache', 'database', 'identity', 'message_bus', 'object_storage', 'platform'].sort(),
    );
    expect(report.checks.every((check) => check.status === 'up')).toBe(true);
    await up.whileRunning(
      'the "stack is up" line',
      () => (up.stderr.includes(`✔ stack is up: ${gateway('')}`) ? true : undefined),
      10_000,
    );
  });

  it('names the gateway it started as the OAuth issuer, so discovery leads a client to its endpoints (RFC 8414)', async () => {
    // README: "Any standard OAuth library finds everything through GET /.well-known/oauth-authorization-server";
    // on a port of its own (GATEWAY_PORT=8081 npm run up) that must point at this gateway, not at :8080.
    const response = await fetch(gateway('/.well-known/oauth-authorization-server'));
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as { issuer: string; token_endpoint: string; jwks_uri: string };
    expect(metadata).toMatchObject({
      issuer: gateway(''),
      token_endpoint: gateway('/v2/auth/token'),
      jwks_uri: gateway('/v2/auth/jwks'),
    });
    expect((await fetch(metadata.jwks_uri)).status).toBe(200);
  });

  it('prints the log lines of all five processes, and only JSON lines on stdout with --json', () => {
    const lines = up.logLines();
    for (const app of APPS) {
      expect(lines).toContainEqual(expect.objectContaining({ service: app, message: `${app} started` }));
    }
  });

  it('keeps mail sent to the local catcher as an .eml file, accepting any login, and logs who it was for', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: ports.LOCAL_SMTP_PORT,
      secure: false,
      auth: { user: 'anyone', pass: 'anything' },
    });
    await transport.sendMail({
      from: 'quick-start@example.test',
      to: 'alice@example.test',
      subject: 'Quick start check',
      text: 'Hello from the quick-start test.',
    });
    transport.close();
    const summary = 'mail to alice@example.test: Quick start check';
    await up.whileRunning(
      'the catcher’s summary line',
      () => (up.logLines().some((line) => line.service === 'smtp' && line.message === summary) ? true : undefined),
      10_000,
    );
    const mailDir = path.join(dataDir, 'mail');
    const files = fs.readdirSync(mailDir).filter((file) => file.endsWith('.eml'));
    expect(files).toHaveLength(1);
    expect(fs.readFileSync(path.join(mailDir, files[0]), 'utf8')).toContain('Subject: Quick start check');
  });

  it('answers the README\'s "First requests" as they are written, copied into a shell (only the port moved)', () => {
    // (After the catcher's test: Ada's activation mail would be a second .eml there.)
    // A newcomer pastes the block after `npm run up`: every command must work as it stands, with the
    // token and the Idempotency-Key it needs given in the block itself, and curl fail on a 4xx/5xx.
    const readme = fs.readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### First requests'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    expect(block).toContain('npm run cli -- bootstrap');
    const script = block.replaceAll('localhost:8080', `localhost:${ports.GATEWAY_PORT}`);
    const result = spawnSync(
      'bash',
      ['-c', `set -euo pipefail\ncurl() { command curl --fail-with-body "$@" && echo; }\n${script}`],
      { cwd: repositoryRoot, env, encoding: 'utf8', timeout: 60_000 },
    );
    // On a failure, what the shell said (curl's problem+json, an unset variable).
    const said = result.status === 0 ? '' : `${result.stdout.slice(-1000)}\n${result.stderr.slice(-1000)}`;
    expect({ status: result.status, said }).toEqual({ status: 0, said: '' });
    // What each answer is documented to hold.
    expect(result.stdout).toMatch(/\{"org_id":"[^"]+","admin_user_id":"[^"]+","client_id":"[^"]+","client_secret":/);
    expect(result.stdout).toContain('"email":"ada@acme.test","display_name":"Ada"');
    expect(result.stdout).toContain('"tiers":[');
    expect(result.stdout).toContain('"dimension":"api"');
  });

  it('stops every process on Ctrl-C (SIGINT) and exits 0 within 20 s, leaving no port open', async () => {
    const sentAt = Date.now();
    up.signal('SIGINT');
    const outcome = await valueWithin(up.exited, 20_000, 'still running after 20 s');
    expect(outcome).toEqual({ code: 0, signal: null });
    expect(Date.now() - sentAt).toBeLessThan(20_000);
    expect(up.stderr).toContain('✔ stopped');
    for (const name of PORT_VARIABLES) {
      expect({ name, open: await acceptsConnections(ports[name]) }).toEqual({ name, open: false });
    }
  });

  it('stops everything and exits 1, naming the process, when one of them dies', async () => {
    // The mailer refuses this configuration at start-up and exits 1; the others start normally.
    failing = new Up({ ...env, MAILER_OPS_PORT: 'not-a-port' });
    const outcome = await valueWithin(failing.exited, 200_000, 'still running');
    expect(outcome).toEqual({ code: 1, signal: null });
    expect(failing.stderr).toContain('✖ mailer exited unexpectedly (exit code 1)');
    expect(failing.logLines()).toContainEqual(expect.objectContaining({ service: 'mailer', level: 'fatal' }));
    for (const name of PORT_VARIABLES.filter((variable) => variable !== 'MAILER_OPS_PORT')) {
      expect({ name, open: await acceptsConnections(ports[name]) }).toEqual({ name, open: false });
    }
  });
});

describe('tools/log-format.mjs', () => {
  it('renders a JSON log line as "HH:MM:SS service  LEVEL message key=value"', () => {
    const time = new Date(2026, 0, 2, 3, 4, 5).toISOString();
    const lines = [
      JSON.stringify({ level: 'info', time, service: 'gateway', message: 'gateway started', port: 8080 }),
      JSON.stringify({ level: 'warn', time, service: 'auth', message: 'slow call', request_id: 'r-1', took: 'a b' }),
    ];
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.FORCE_COLOR;
    const result = spawnSync(process.execPath, ['tools/log-format.mjs'], {
      cwd: repositoryRoot,
      env,
      input: `${lines.join('\n')}\n`,
      encoding: 'utf8',
    });
    expect(result.stdout).toBe(
      '03:04:05 gateway  INFO gateway started port=8080\n03:04:05 auth     WARN slow call request_id=r-1 took="a b"\n',
    );
  });
});

describe('tools/services.mjs (the backing services step of npm run up and npm run setup)', () => {
  it('finds Postgres, Redis and NATS named by URLs that leave out their default ports', () => {
    // postgresql://host/db, redis://host and nats://host are complete URLs: their clients connect to
    // 5432, 6379 and 4222 (the servers the tests use), so the step must look there, not at port 0.
    const result = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "await (await import('./tools/services.mjs')).ensureServices();"],
      {
        cwd: repositoryRoot,
        env: {
          ...process.env,
          IDENTITY_DATABASE_URL: 'postgresql://postgres@127.0.0.1/identity',
          REDIS_URL: 'redis://127.0.0.1',
          NATS_URL: 'nats://127.0.0.1',
        },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(result.stdout).not.toContain('starting local');
    expect(result.stdout).toContain('PostgreSQL, Redis and NATS are up');
  });
});
