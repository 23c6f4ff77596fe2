import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

// bench is not an Nx project: the testing lib is imported by path, like the e2e global setup does.
import {
  type AppName,
  APPS,
  createEmptyDatabase,
  databaseUrl,
  dropDatabases,
  freePort,
  repositoryRoot,
  waitFor,
} from '../libs/testing/src';

/** Resident memory of one process, in MiB: the peak since it started (VmHWM) and now (VmRSS). */
export interface Memory {
  pid: number;
  peak_rss_mb: number;
  rss_mb: number;
  /** Of rss_mb, pages of files: Node's binary and shared libraries, the same pages in every Node process. */
  file_mb: number;
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

/** VmHWM and VmRSS from /proc/<pid>/status; undefined when the process is gone. */
export function memoryOf(pid: number): Memory | undefined {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { pid, peak_rss_mb: mib(field('VmHWM')), rss_mb: mib(field('VmRSS')), file_mb: mib(field('RssFile')) };
}

const readProc = (pid: string | number, file: string) => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0');
  } catch {
    return [];
  }
};

const numericEntries = () => fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));

/**
 * The pids of one TestStack's processes: TestStack does not expose them, so /proc is scanned for
 * `apps/<app>/src/main.ts` (or `dist/apps/<app>/src/main.js`) on the command line and this stack's
 * GATEWAY_PORT in the environment.
 */
export function stackPids(gatewayPort: number): Partial<Record<AppName, number>> {
  const pids: Partial<Record<AppName, number>> = {};
  for (const pid of numericEntries()) {
    const commandLine = readProc(pid, 'cmdline');
    const app = APPS.find((name) =>
      commandLine.some((arg) => arg.endsWith(`apps/${name}/src/main.ts`) || arg.endsWith(`apps/${name}/src/main.js`)),
    );
    if (!app) continue;
    if (readProc(pid, 'environ').includes(`GATEWAY_PORT=${gatewayPort}`)) pids[app] = Number(pid);
  }
  return pids;
}

/** One environment variable of a running process (from /proc/<pid>/environ). */
export function environmentOf(pid: number, name: string): string | undefined {
  const entry = readProc(pid, 'environ').find((item) => item.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

let clockTicks: number | undefined;
/** Clock ticks per second of /proc/<pid>/stat's CPU times (`getconf CLK_TCK`, 100 nearly always). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * User + system CPU of a process and all its threads so far, in ms (of one thread with `path`
 * `<pid>/task/<tid>`); undefined when it is gone.
 */
export function cpuMsOf(pid: number, path = `${pid}`): number | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${path}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces: the fields after it start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / ticksPerSecond();
}

/** What a Node process's CPU time is spent on, by thread (ms): see `threadCpuMsOf`. */
export interface ThreadCpu {
  /** The main thread: JavaScript, the event loop, every socket read and write. */
  main: number;
  /** libuv's thread pool (`libuv-worker`): argon2's hashes, crypto and fs jobs handed to it. */
  pool: number;
  /** V8's helper threads (garbage collection, compilation) and the rest. */
  other: number;
}

/**
 * CPU of each thread of a process (/proc/<pid>/task/<tid>/stat), ms, by thread id, and whose kind each
 * thread is; undefined when the process is gone.
 */
function threadsOf(pid: number): Map<number, { kind: keyof ThreadCpu; ms: number }> | undefined {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const threads = new Map<number, { kind: keyof ThreadCpu; ms: number }>();
  for (const tid of tids) {
    const ms = cpuMsOf(pid, `${pid}/task/${tid}`);
    if (ms === undefined) continue;
    const name = readProc(pid, `task/${tid}/comm`)[0]?.trim();
    const kind = Number(tid) === pid ? 'main' : name === 'libuv-worker' ? 'pool' : 'other';
    threads.set(Number(tid), { kind, ms });
  }
  return threads;
}

/**
 * A process's CPU over an interval by thread kind (`ThreadCpu`): a thread started during it counts from
 * zero, one ended during it is not counted (libuv's pool and V8's helpers live as long as the process).
 */
export class ThreadCpuMeter {
  private readonly start: Map<number, { kind: keyof ThreadCpu; ms: number }>;

  constructor(private readonly pid: number) {
    this.start = threadsOf(pid) ?? new Map();
  }

  read(): ThreadCpu | undefined {
    const now = threadsOf(this.pid);
    if (!now) return undefined;
    const split: ThreadCpu = { main: 0, pool: 0, other: 0 };
    for (const [tid, { kind, ms }] of now) split[kind] += ms - (this.start.get(tid)?.ms ?? 0);
    return { main: Math.round(split.main), pool: Math.round(split.pool), other: Math.round(split.other) };
  }
}

/** Pids of the processes whose command name (`/proc/<pid>/comm`) is `name`, optionally filtered. */
export function pidsNamed(name: string, filter: (pid: number) => boolean = () => true): number[] {
  return numericEntries()
    .filter((pid) => readProc(pid, 'comm')[0]?.trim() === name)
    .map(Number)
    .filter(filter);
}

/** The parent pid of a process (field 4 of /proc/<pid>/stat). */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Postgres backends serving one of `databases` (their title is `postgres: <cluster>: <user> <db> …`). */
export function postgresBackends(databases: string[]): number[] {
  return numericEntries()
    .filter((pid) => {
      const title = readProc(pid, 'cmdline').join(' ');
      return title.startsWith('postgres:') && databases.some((name) => title.split(' ').includes(name));
    })
    .map(Number);
}

/**
 * CPU time of a changing set of processes over an interval (e.g. Postgres backends that connect during
 * it): a process first seen at the end counts from zero, one gone at the end counts until last seen.
 */
export class CpuMeter {
  private readonly start = new Map<number, number>();

  constructor(private readonly pids: () => number[]) {
    for (const pid of pids()) {
      const cpu = cpuMsOf(pid);
      if (cpu !== undefined) this.start.set(pid, cpu);
    }
  }

  /** CPU ms used since the meter was made. */
  read(): number {
    let total = 0;
    for (const pid of new Set([...this.start.keys(), ...this.pids()])) {
      const now = cpuMsOf(pid);
      if (now === undefined) continue;
      total += now - (this.start.get(pid) ?? 0);
    }
    return Math.round(total);
  }
}

/** Samples the resident memory of some processes every `intervalMs` and keeps each one's largest. */
export class RssSampler {
  private readonly peaks = new Map<string, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pids: () => Record<string, number | undefined>,
    private readonly intervalMs = 100,
  ) {}

  start(): void {
    this.sample();
    this.timer ??= setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The largest RSS seen per process, in MiB. */
  peak(name: string): number | undefined {
    const kib = this.peaks.get(name);
    return kib === undefined ? undefined : mib(kib);
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.pids())) {
      if (!pid) continue;
      const status = readProc(pid, 'status').join('');
      const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
      if (Number.isFinite(kib)) this.peaks.set(name, Math.max(this.peaks.get(name) ?? 0, kib));
    }
  }
}

const INSPECTOR_LINE = /Debugger listening on (ws:\/\/\S+)/;

/**
 * The inspector address a process printed at start (`--inspect=127.0.0.1:0` picks a free port and
 * says which on stderr), read from its log file; the last one when the file holds several starts.
 */
export function inspectorUrlInLog(logFile: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(logFile, 'utf8');
  } catch {
    return undefined;
  }
  const found = [...text.matchAll(new RegExp(INSPECTOR_LINE.source, 'g'))];
  return found.at(-1)?.[1];
}

/**
 * A small server of the bench's own (the bare Fastify baseline, the passthrough's two halves) in a
 * child process with an inspector on a free port, so it can be profiled like the stack's processes.
 */
export class ChildServer {
  private inspector?: string;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  /**
   * Starts `node --inspect=127.0.0.1:0 <args…> <port> <extra…>` and waits until `ready(url)` holds.
   * The script gets its port as the first argument after `args`.
   */
  static async start(
    name: string,
    args: string[],
    options: { extra?: string[]; ready: (url: string) => Promise<boolean>; env?: NodeJS.ProcessEnv },
  ): Promise<ChildServer> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--inspect=127.0.0.1:0', ...args, String(port), ...(options.extra ?? [])], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: options.env ?? process.env,
    });
    const server = new ChildServer(name, child, port);
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      const inspector = INSPECTOR_LINE.exec(line);
      if (inspector) server.inspector = inspector[1];
      else if (!line.startsWith('For help, see:')) process.stderr.write(`[${name}] ${line}\n`);
    });
    try {
      const exited = new Promise<never>((_, reject) =>
        child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`))),
      );
      exited.catch(() => undefined);
      await Promise.race([
        exited,
        waitFor(name, async () => ((await options.ready(server.url)) && server.inspector ? true : undefined), {
          timeoutMs: 30_000,
        }),
      ]);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get inspectorUrl(): string | undefined {
    return this.inspector;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

const httpOk = async (url: string) => {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
};

/** The baseline: a bare Fastify handler (bench/baseline-server.mjs). */
export const startBaseline = () =>
  ChildServer.start('baseline', [path.join(__dirname, 'baseline-server.mjs')], { ready: httpOk });

/**
 * The passthrough: a bare Fastify handler that makes one grpc-js unary call (grpc.health.v1.Health/Check)
 * to a trivial grpc-js server in another process and answers what it said (bench/passthrough.mjs).
 */
export async function startPassthrough(): Promise<{ front: ChildServer; backend: ChildServer }> {
  const script = path.join(__dirname, 'passthrough.mjs');
  const backend = await ChildServer.start('passthrough gRPC server', [script, 'grpc'], {
    // The gRPC side has no HTTP; the front's first answer proves it serves.
    ready: () => Promise.resolve(true),
  });
  try {
    const front = await ChildServer.start('passthrough Fastify', [script, 'http'], {
      extra: [String(backend.port)],
      ready: httpOk,
    });
    return { front, backend };
  } catch (error) {
    await backend.stop();
    throw error;
  }
}

/** The architecture floors' two processes and their database (bench/floors.mjs). */
export interface Floors {
  front: ChildServer;
  backend: ChildServer;
  database: string;
  stop(): Promise<void>;
}

/**
 * The architecture floors: a bare Fastify front that takes a token from the gateway's own buckets (in
 * Redis, or in memory for health) and makes one grpc-js call, and a grpc-js service with pg and jose in
 * a database of its own (made empty here, dropped by `stop`). The front loads the gateway's
 * token-buckets module from dist/ or, with `entry: 'source'`, from the TypeScript source through
 * tools/run-ts.cjs.
 */
export async function startFloors(options: { entry: 'dist' | 'source'; redisUrl: string }): Promise<Floors> {
  const script = path.join(__dirname, 'floors.mjs');
  const buckets = 'apps/gateway/src/rate-limits/token-buckets';
  const database = await createEmptyDatabase('bench_floors');
  const started: ChildServer[] = [];
  const stop = async () => {
    for (const server of started.reverse()) await server.stop();
    await dropDatabases([database]);
  };
  try {
    const backend = await ChildServer.start('floors gRPC service', [script, 'grpc'], {
      env: { ...process.env, FLOOR_DATABASE_URL: databaseUrl(database) },
      // The gRPC side has no HTTP; the front's first answer proves it serves.
      ready: () => Promise.resolve(true),
    });
    started.push(backend);
    const front = await ChildServer.start(
      'floors Fastify',
      [...(options.entry === 'source' ? ['-r', path.join(repositoryRoot, 'tools/run-ts.cjs')] : []), script, 'http'],
      {
        extra: [String(backend.port)],
        env: {
          ...process.env,
          REDIS_URL: options.redisUrl,
          FLOOR_TOKEN_BUCKETS:
            options.entry === 'dist'
              ? path.join(repositoryRoot, 'dist', `${buckets}.js`)
              : path.join(repositoryRoot, `${buckets}.ts`),
        },
        ready: async (url) => httpOk(`${url}users-read`),
      },
    );
    started.push(front);
    return { front, backend, database, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
