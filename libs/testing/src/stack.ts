import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { createTestDatabases, databaseUrl, dropDatabases } from './databases';
import { DedicatedServer } from './dedicated-servers';
import { freePort } from './ports';
import { waitFor } from './wait';

export const APPS = ['identity', 'auth', 'platform', 'mailer', 'gateway'] as const;
export type AppName = (typeof APPS)[number];

export const repositoryRoot = path.resolve(__dirname, '../../..');

export interface StackOptions {
  /** Which processes to run; all five by default. */
  apps?: readonly AppName[];
  /** Postgres port the services connect to (a TcpProxy's, to cut it); the shared server by default. */
  postgresPort?: number;
  redisUrl?: string;
  natsUrl?: string;
  s3Endpoint?: string;
  /** Extra environment for every process. */
  env?: Record<string, string>;
}

interface Ports {
  grpc: Partial<Record<AppName, number>>;
  ops: Record<AppName, number>;
  http: number;
}

/**
 * The whole service as separate processes started from source, the way `npm run up` runs it, on
 * spare ports with fresh databases; processes can be stopped and started one by one.
 */
export class TestStack {
  private readonly children = new Map<AppName, ChildProcess>();
  private readonly extras: ChildProcess[] = [];
  private ownNats?: DedicatedServer;
  private ownNatsDir?: string;

  private constructor(
    private readonly apps: readonly AppName[],
    readonly ports: Ports,
    readonly env: Record<string, string>,
    private readonly databases: string[],
    private readonly logDir: string,
  ) {}

  static async start(options: StackOptions = {}): Promise<TestStack> {
    const apps = options.apps ?? APPS;
    // Each stack gets its own NATS unless told otherwise: durable consumers of two stacks on one
    // server would share (and split) each other's events.
    let nats: DedicatedServer | undefined;
    let natsDir: string | undefined;
    if (!options.natsUrl) {
      natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stack-nats-'));
      nats = await DedicatedServer.nats(natsDir);
    }
    const names = await createTestDatabases();
    const ports: Ports = {
      grpc: { identity: await freePort(), auth: await freePort(), platform: await freePort() },
      ops: {
        identity: await freePort(),
        auth: await freePort(),
        platform: await freePort(),
        mailer: await freePort(),
        gateway: await freePort(),
      },
      http: await freePort(),
    };
    const env: Record<string, string> = {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'info',
      REGION: 'test-region-1',
      BIND_HOST: '127.0.0.1',
      IDENTITY_DATABASE_URL: databaseUrl(names.identity, options.postgresPort),
      AUTH_DATABASE_URL: databaseUrl(names.auth, options.postgresPort),
      PLATFORM_DATABASE_URL: databaseUrl(names.platform, options.postgresPort),
      REDIS_KEY_PREFIX: `test:${ports.http}:`,
      REDIS_URL: options.redisUrl ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      NATS_URL: options.natsUrl ?? nats!.url,
      S3_ENDPOINT: options.s3Endpoint ?? 'http://127.0.0.1:9',
      IDENTITY_GRPC_PORT: String(ports.grpc.identity),
      AUTH_GRPC_PORT: String(ports.grpc.auth),
      PLATFORM_GRPC_PORT: String(ports.grpc.platform),
      IDENTITY_GRPC_ADDR: `127.0.0.1:${ports.grpc.identity}`,
      AUTH_GRPC_ADDR: `127.0.0.1:${ports.grpc.auth}`,
      PLATFORM_GRPC_ADDR: `127.0.0.1:${ports.grpc.platform}`,
      IDENTITY_OPS_PORT: String(ports.ops.identity),
      AUTH_OPS_PORT: String(ports.ops.auth),
      PLATFORM_OPS_PORT: String(ports.ops.platform),
      MAILER_OPS_PORT: String(ports.ops.mailer),
      GATEWAY_OPS_PORT: String(ports.ops.gateway),
      GATEWAY_PORT: String(ports.http),
      PUBLIC_URL: `http://127.0.0.1:${ports.http}`,
      HEALTH_PROBE_INTERVAL_MS: '250',
      HEALTH_PROBE_TIMEOUT_MS: '500',
      ...options.env,
    };
    const logDir = path.join(repositoryRoot, '.data', 'test-logs');
    fs.mkdirSync(logDir, { recursive: true });
    const stack = new TestStack(apps, ports, env, Object.values(names), logDir);
    stack.ownNats = nats;
    stack.ownNatsDir = natsDir;
    try {
      await Promise.all(apps.map((app) => stack.startApp(app)));
    } catch (error) {
      await stack.close();
      throw error;
    }
    return stack;
  }

  /** A URL of the public gateway. */
  url(pathAndQuery = '/'): string {
    return `http://127.0.0.1:${this.ports.http}${pathAndQuery}`;
  }

  opsUrl(app: AppName, pathAndQuery: string): string {
    return `http://127.0.0.1:${this.ports.ops[app]}${pathAndQuery}`;
  }

  async startApp(app: AppName): Promise<void> {
    if (this.children.has(app)) return;
    const log = fs.openSync(path.join(this.logDir, `${this.ports.http}-${app}.log`), 'a');
    const child = spawn(
      process.execPath,
      ['-r', path.join(repositoryRoot, 'tools/run-ts.cjs'), path.join(repositoryRoot, `apps/${app}/src/main.ts`)],
      { cwd: repositoryRoot, env: { ...process.env, ...this.env }, stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    this.children.set(app, child);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`${app} exited with ${code} before it was up`))),
    );
    await Promise.race([
      exited,
      waitFor(`${app} /livez`, async () => ((await fetch(this.opsUrl(app, '/livez'))).ok ? true : undefined), {
        timeoutMs: 30_000,
      }),
    ]);
    exited.catch(() => undefined);
  }

  /**
   * Another gateway process against the same backends, Redis and databases (scale-out); stopped with
   * the stack. Answers its base URL.
   */
  async startExtraGateway(): Promise<string> {
    const http = await freePort();
    const ops = await freePort();
    const log = fs.openSync(path.join(this.logDir, `${this.ports.http}-gateway-${http}.log`), 'a');
    const child = spawn(
      process.execPath,
      ['-r', path.join(repositoryRoot, 'tools/run-ts.cjs'), path.join(repositoryRoot, 'apps/gateway/src/main.ts')],
      {
        cwd: repositoryRoot,
        env: { ...process.env, ...this.env, GATEWAY_PORT: String(http), GATEWAY_OPS_PORT: String(ops) },
        stdio: ['ignore', log, log],
      },
    );
    fs.closeSync(log);
    this.extras.push(child);
    await waitFor('extra gateway', async () => ((await fetch(`http://127.0.0.1:${ops}/livez`)).ok ? true : undefined), {
      timeoutMs: 30_000,
    });
    return `http://127.0.0.1:${http}`;
  }

  /** Stops one process: SIGTERM (graceful), or SIGKILL to crash it. */
  async stopApp(app: AppName, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.children.get(app);
    this.children.delete(app);
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    for (const extra of this.extras) extra.kill('SIGKILL');
    await Promise.all([...this.children.keys()].map((app) => this.stopApp(app)));
    await dropDatabases(this.databases);
    await this.ownNats?.stop();
    if (this.ownNatsDir) fs.rmSync(this.ownNatsDir, { recursive: true, force: true });
  }

  /** Runs the operator CLI (`npm run cli -- …`) against this stack's databases; its JSON answer. */
  cli<T = Record<string, unknown>>(...args: string[]): T {
    const result = spawnSync(process.execPath, [path.join(repositoryRoot, 'tools/cli.mjs'), ...args, '--json'], {
      cwd: repositoryRoot,
      env: { ...process.env, ...this.env },
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`cli ${args[0]} failed: ${result.stderr}`);
    return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as T;
  }

  get running(): AppName[] {
    return this.apps.filter((app) => this.children.has(app));
  }
}
