import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { createTestDatabases, databaseUrl, dropDatabases, postgresServerUrl } from './databases';
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
  /**
   * Instances of every app (scale-out), 1 by default. The others run on their own ports against the
   * same databases, Redis and NATS; the `*_GRPC_ADDR` settings list every instance (round-robin).
   */
  instances?: number;
  /**
   * What runs: the TypeScript sources through SWC (the default), or the build in `dist/` the way
   * `npm run up` and the images run it (`npm run build` first).
   */
  entry?: 'source' | 'dist';
}

/** One more instance of an app (scale-out): its own ports, otherwise the stack's environment. */
export interface Replica {
  app: AppName;
  /** 1 for the second instance, and so on. */
  index: number;
  grpc?: number;
  ops: number;
  /** The gateway's public port. */
  http?: number;
}

const GRPC_APPS = ['identity', 'auth', 'platform'] as const;

/** How every service process runs (V8 heap sizing, glibc allocator), as `npm run up` and the image run it. */
export const nodeRuntime = JSON.parse(
  fs.readFileSync(path.join(repositoryRoot, 'tools', 'node-runtime.json'), 'utf8'),
) as { nodeArguments: string[]; environment: Record<string, string> };

/** Node's arguments that start one app from source (SWC) or from the build in dist/. */
export function appArguments(app: AppName, entry: 'source' | 'dist' = 'source'): string[] {
  return [
    ...nodeRuntime.nodeArguments,
    ...(entry === 'dist'
      ? [path.join(repositoryRoot, 'dist', 'apps', app, 'src', 'main.js')]
      : ['-r', path.join(repositoryRoot, 'tools/run-ts.cjs'), path.join(repositoryRoot, `apps/${app}/src/main.ts`)]),
  ];
}

/** How long a process may take to come up: several start at once on a small, shared machine. */
const START_TIMEOUT_MS = 90_000;

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
  /** The instances beyond the first of each app (see StackOptions.instances). */
  readonly replicas: Replica[] = [];
  private readonly replicaChildren = new Map<Replica, ChildProcess>();

  private constructor(
    private readonly apps: readonly AppName[],
    readonly ports: Ports,
    readonly env: Record<string, string>,
    private readonly databases: string[],
    private readonly logDir: string,
    private readonly entry: 'source' | 'dist' = 'source',
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
      ...nodeRuntime.environment,
      ...options.env,
    };
    const replicas: Replica[] = [];
    for (let index = 1; index < (options.instances ?? 1); index += 1) {
      for (const app of apps) {
        const grpc = (GRPC_APPS as readonly string[]).includes(app) ? await freePort() : undefined;
        replicas.push({
          app,
          index,
          grpc,
          ops: await freePort(),
          http: app === 'gateway' ? await freePort() : undefined,
        });
      }
    }
    for (const app of GRPC_APPS) {
      const addresses = [ports.grpc[app], ...replicas.filter((r) => r.app === app).map((r) => r.grpc)];
      if (addresses.length > 1 && !options.env?.[`${app.toUpperCase()}_GRPC_ADDR`]) {
        env[`${app.toUpperCase()}_GRPC_ADDR`] = addresses.map((p) => `127.0.0.1:${p}`).join(',');
      }
    }
    const logDir = path.join(repositoryRoot, '.data', 'test-logs');
    fs.mkdirSync(logDir, { recursive: true });
    const stack = new TestStack(apps, ports, env, Object.values(names), logDir, options.entry);
    stack.ownNats = nats;
    stack.ownNatsDir = natsDir;
    stack.replicas.push(...replicas);
    try {
      await Promise.all(apps.map((app) => stack.startApp(app)));
      await Promise.all(replicas.map((replica) => stack.startReplica(replica)));
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
    const child = spawn(process.execPath, appArguments(app, this.entry), {
      cwd: repositoryRoot,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    this.children.set(app, child);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`${app} exited with ${code} before it was up`))),
    );
    await Promise.race([
      exited,
      waitFor(`${app} /livez`, async () => ((await fetch(this.opsUrl(app, '/livez'))).ok ? true : undefined), {
        timeoutMs: START_TIMEOUT_MS,
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
    const child = spawn(process.execPath, appArguments('gateway', this.entry), {
      cwd: repositoryRoot,
      env: { ...process.env, ...this.env, GATEWAY_PORT: String(http), GATEWAY_OPS_PORT: String(ops) },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    this.extras.push(child);
    await waitFor('extra gateway', async () => ((await fetch(`http://127.0.0.1:${ops}/livez`)).ok ? true : undefined), {
      timeoutMs: 30_000,
    });
    return `http://127.0.0.1:${http}`;
  }

  /** The public URL of every gateway instance: the first one's, then its replicas'. */
  gatewayUrls(): string[] {
    const replicas = this.replicas.filter((replica) => replica.app === 'gateway');
    return [this.url(''), ...replicas.map((replica) => `http://127.0.0.1:${replica.http}`)];
  }

  /** Starts one replica (again) with its own ports; see StackOptions.instances. */
  async startReplica(replica: Replica): Promise<void> {
    if (this.replicaChildren.has(replica)) return;
    const upper = replica.app.toUpperCase();
    const own: Record<string, string> = { [`${upper}_OPS_PORT`]: String(replica.ops) };
    if (replica.grpc) own[`${upper}_GRPC_PORT`] = String(replica.grpc);
    if (replica.http) own.GATEWAY_PORT = String(replica.http);
    const log = fs.openSync(path.join(this.logDir, `${this.ports.http}-${replica.app}-${replica.index}.log`), 'a');
    const child = spawn(process.execPath, appArguments(replica.app, this.entry), {
      cwd: repositoryRoot,
      env: { ...process.env, ...this.env, ...own },
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    this.replicaChildren.set(replica, child);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`${replica.app} #${replica.index} exited with ${code}`))),
    );
    await Promise.race([
      exited,
      waitFor(
        `${replica.app} #${replica.index} /livez`,
        async () => ((await fetch(`http://127.0.0.1:${replica.ops}/livez`)).ok ? true : undefined),
        { timeoutMs: START_TIMEOUT_MS },
      ),
    ]);
    exited.catch(() => undefined);
  }

  /**
   * Sends a signal to one running process without forgetting it: SIGSTOP hangs it (its sockets stay
   * open, nothing answers), SIGCONT lets it go on.
   */
  signalApp(app: AppName, signal: NodeJS.Signals): void {
    this.children.get(app)?.kill(signal);
  }

  /**
   * Sends SIGTERM and resolves with how the process ended, without the SIGKILL fallback of stopApp (for
   * tests of the graceful shutdown itself). The process is forgotten; startApp starts it again.
   */
  terminateApp(app: AppName): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const child = this.children.get(app);
    if (!child) return Promise.reject(new Error(`${app} is not running`));
    this.children.delete(app);
    if (child.exitCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    child.kill('SIGTERM');
    return exit;
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
    for (const child of this.replicaChildren.values()) child.kill('SIGKILL');
    this.replicaChildren.clear();
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

  /**
   * `cli`, connected to the Postgres server directly rather than through the stack's TcpProxy
   * (`postgresPort`): the CLI runs synchronously, which stalls an in-process proxy.
   */
  cliDirect<T = Record<string, unknown>>(...args: string[]): T {
    const direct: Record<string, string> = {};
    for (const name of ['IDENTITY_DATABASE_URL', 'AUTH_DATABASE_URL', 'PLATFORM_DATABASE_URL']) {
      const url = new URL(this.env[name]);
      const server = postgresServerUrl();
      url.hostname = server.hostname;
      url.port = server.port;
      direct[name] = url.toString();
    }
    const result = spawnSync(process.execPath, [path.join(repositoryRoot, 'tools/cli.mjs'), ...args, '--json'], {
      cwd: repositoryRoot,
      env: { ...process.env, ...this.env, ...direct },
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(`cli ${args[0]} failed: ${result.stderr}`);
    return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as T;
  }

  get running(): AppName[] {
    return this.apps.filter((app) => this.children.has(app));
  }
}
