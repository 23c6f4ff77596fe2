import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// bench is not an Nx project: the testing lib is imported by path, like the e2e global setup does.
import { type AppName, APPS, freePort, waitFor } from '../libs/testing/src';

/** Resident memory of one process, in MiB: the peak since it started (VmHWM) and now (VmRSS). */
export interface Memory {
  pid: number;
  peak_rss_mb: number;
  rss_mb: number;
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
  return { pid, peak_rss_mb: mib(field('VmHWM')), rss_mb: mib(field('VmRSS')) };
}

const readProc = (pid: string, file: string) => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0');
  } catch {
    return [];
  }
};

/**
 * The pids of one TestStack's processes: TestStack does not expose them, so /proc is scanned for
 * `apps/<app>/src/main.ts` on the command line and this stack's GATEWAY_PORT in the environment.
 */
export function stackPids(gatewayPort: number): Partial<Record<AppName, number>> {
  const pids: Partial<Record<AppName, number>> = {};
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const commandLine = readProc(pid, 'cmdline');
    const app = APPS.find((name) => commandLine.some((arg) => arg.endsWith(`apps/${name}/src/main.ts`)));
    if (!app) continue;
    if (readProc(pid, 'environ').includes(`GATEWAY_PORT=${gatewayPort}`)) pids[app] = Number(pid);
  }
  return pids;
}

/** The baseline server (a bare Fastify handler) in a child process of its own. */
export class BaselineServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(): Promise<BaselineServer> {
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(__dirname, 'baseline-server.mjs'), String(port)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const server = new BaselineServer(child, port);
    try {
      const exited = new Promise<never>((_, reject) =>
        child.once('exit', (code) => reject(new Error(`baseline server exited with ${code}`))),
      );
      exited.catch(() => undefined);
      await Promise.race([
        exited,
        waitFor('baseline server', async () => ((await fetch(server.url)).ok ? true : undefined)),
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

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
