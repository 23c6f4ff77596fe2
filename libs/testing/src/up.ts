// `npm run up` as a test runs it: tools/up.mjs --json as a child process, on spare ports with its own
// databases. Used by the acceptance suite (e2e/) and the quick-start test (tests/quick-start/).
import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

import { valueWithin } from '@acct/observability';

import { databaseUrl } from './databases';
import { freePort } from './ports';
import { repositoryRoot } from './stack';
import { waitFor } from './wait';

export interface LogLine {
  level: string;
  service: string;
  message: string;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** Every port the stack listens on: the processes' own and the local object store's and catcher's. */
export const PORT_VARIABLES = [
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
export type PortVariable = (typeof PORT_VARIABLES)[number];
export type Ports = Record<PortVariable, number>;

/** One distinct spare port per variable. */
export async function sparePorts(): Promise<Ports> {
  const ports = {} as Ports;
  const taken = new Set<number>();
  for (const name of PORT_VARIABLES) {
    let port = await freePort();
    while (taken.has(port)) port = await freePort();
    taken.add(port);
    ports[name] = port;
  }
  return ports;
}

/**
 * The environment `npm run up` gets: the spare ports, the services' addresses on them, one database
 * per service (`<prefix>_<service>`, created by up.mjs's migration step) and the given NATS. S3_ENDPOINT,
 * SMTP_URL, PUBLIC_URL and TOKEN_ISSUER are unset, so up.mjs starts its own object store and mail
 * catcher and derives the links' base and the issuer from the gateway's port; set them in `extra` to
 * point elsewhere.
 */
export function upEnvironment(options: {
  ports: Ports;
  databasePrefix: string;
  natsUrl: string;
  dataDir: string;
  extra?: NodeJS.ProcessEnv;
}): NodeJS.ProcessEnv {
  const { ports, databasePrefix } = options;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(PORT_VARIABLES.map((name) => [name, String(ports[name])])),
    IDENTITY_GRPC_ADDR: `127.0.0.1:${ports.IDENTITY_GRPC_PORT}`,
    AUTH_GRPC_ADDR: `127.0.0.1:${ports.AUTH_GRPC_PORT}`,
    PLATFORM_GRPC_ADDR: `127.0.0.1:${ports.PLATFORM_GRPC_PORT}`,
    IDENTITY_DATABASE_URL: databaseUrl(`${databasePrefix}_identity`),
    AUTH_DATABASE_URL: databaseUrl(`${databasePrefix}_auth`),
    PLATFORM_DATABASE_URL: databaseUrl(`${databasePrefix}_platform`),
    NATS_URL: options.natsUrl,
    LOCAL_DATA_DIR: options.dataDir,
    LOG_LEVEL: 'info',
    HEALTH_PROBE_INTERVAL_MS: '250',
  };
  delete env.S3_ENDPOINT;
  delete env.SMTP_URL;
  delete env.PUBLIC_URL;
  delete env.TOKEN_ISSUER;
  return { ...env, ...options.extra };
}

export const acceptsConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** `node tools/up.mjs --json` as a child, its output collected. */
export class Up {
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
        const errors = this.stdout
          .split('\n')
          .filter((line) => /"level":"(error|fatal)"/.test(line))
          .slice(-20)
          .join('\n');
        throw new Error(
          `up.mjs exited (${signal ?? code}) while waiting for ${what}\n--- stderr ---\n${tail}\n--- errors ---\n${errors}`,
        );
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
    if ((await valueWithin(this.exited, 30_000, 'running')) === 'running') this.child.kill('SIGKILL');
  }
}
