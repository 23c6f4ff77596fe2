import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import {
  APPS,
  databaseUrl,
  DedicatedServer,
  dropDatabases,
  freePort,
  repositoryRoot,
  SERVICES_WITH_DATABASES,
  waitFor,
} from '@acct/testing';
import nodemailer from 'nodemailer';

interface HealthReport {
  status: string;
  checks: Array<{ component: string; status: string }>;
}

interface LogLine {
  level: string;
  service: string;
  message: string;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** Every port the stack listens on: the processes' own and the local object store's and catcher's. */
const PORT_VARIABLES = [
  'GATEWAY_PORT',
  'GATEWAY_OPS_PORT',
  'IDENTITY_GRPC_PORT',
  'IDENTITY_OPS_PORT',
  'AUTH_GRPC_PORT',
  'AUTH_OPS_PORT',
  'PLATFORM_GRPC_PORT',
  'PLATFORM_OPS_PORT',
  'MAILER_OPS_PORT',
  'LOCAL_S3_PORT',
  'LOCAL_SMTP_PORT',
] as const;
type PortVariable = (typeof PORT_VARIABLES)[number];

const acceptsConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** The promise's value, or `fallback` once `ms` have passed (the timer never outlives the wait). */
async function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** `node tools/up.mjs --json` as a child, its output collected. */
class Up {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, ['tools/up.mjs', '--json'], {
      cwd: repositoryRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** stdout, line by line; with --json every line is a JSON object (JSON.parse throws otherwise). */
  logLines(): LogLine[] {
    return this.stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine);
  }

  /** Polls like waitFor, but fails at once, with up.mjs's own output, when up.mjs has exited. */
  whileRunning<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
    return Promise.race([
      waitFor(what, probe, { timeoutMs, intervalMs: 250 }),
      this.exited.then(({ code, signal }) => {
        const tail = this.stderr.split('\n').slice(-40).join('\n');
        throw new Error(`up.mjs exited (${signal ?? code}) while waiting for ${what}\n--- stderr ---\n${tail}`);
      }),
    ]);
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Stops it if it still runs: SIGTERM, SIGKILL after 30 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    if ((await within(this.exited, 30_000, 'running')) === 'running') this.child.kill('SIGKILL');
  }
}

describe('npm run up (tools/up.mjs --json) on spare ports with its own databases', () => {
  const suffix = randomBytes(4).toString('hex');
  const databases = SERVICES_WITH_DATABASES.map((service) => `qs_${service}_${suffix}`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quick-start-'));
  const ports = {} as Record<PortVariable, number>;
  let env: NodeJS.ProcessEnv;
  let nats: DedicatedServer;
  const natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quick-start-nats-'));
  let up: Up;
  let failing: Up | undefined;

  const gateway = (pathAndQuery: string) => `http://127.0.0.1:${ports.GATEWAY_PORT}${pathAndQuery}`;

  beforeAll(async () => {
    // Its own broker: a shared one may hold other stacks' events for the durable consumers.
    nats = await DedicatedServer.nats(natsDir);
    const taken = new Set<number>();
    for (const name of PORT_VARIABLES) {
      let port = await freePort();
      while (taken.has(port)) port = await freePort();
      taken.add(port);
      ports[name] = port;
    }
    env = {
      ...process.env,
      ...Object.fromEntries(PORT_VARIABLES.map((name) => [name, String(ports[name])])),
      IDENTITY_GRPC_ADDR: `127.0.0.1:${ports.IDENTITY_GRPC_PORT}`,
      AUTH_GRPC_ADDR: `127.0.0.1:${ports.AUTH_GRPC_PORT}`,
      PLATFORM_GRPC_ADDR: `127.0.0.1:${ports.PLATFORM_GRPC_PORT}`,
      IDENTITY_DATABASE_URL: databaseUrl(`qs_identity_${suffix}`),
      AUTH_DATABASE_URL: databaseUrl(`qs_auth_${suffix}`),
      PLATFORM_DATABASE_URL: databaseUrl(`qs_platform_${suffix}`),
      NATS_URL: nats.url,
      LOCAL_DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      HEALTH_PROBE_INTERVAL_MS: '250',
    };
    // Unset: up.mjs then starts its own object store and mail catcher (on LOCAL_S3_PORT / LOCAL_SMTP_PORT).
    delete env.S3_ENDPOINT;
    delete env.SMTP_URL;
    delete env.PUBLIC_URL;
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

  it('stops every process on Ctrl-C (SIGINT) and exits 0 within 20 s, leaving no port open', async () => {
    const sentAt = Date.now();
    up.signal('SIGINT');
    const outcome = await within(up.exited, 20_000, 'still running after 20 s');
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
    const outcome = await within(failing.exited, 200_000, 'still running');
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
