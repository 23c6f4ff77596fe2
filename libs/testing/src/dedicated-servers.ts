import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

import { freePort } from './ports';
import { waitFor } from './wait';

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/**
 * A server process of the test's own (redis-server, nats-server) on a spare port, stopped and started
 * by pid; the shared servers other tests use are never touched.
 */
export class DedicatedServer {
  private child?: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly command: string,
    private readonly args: (port: number) => string[],
  ) {}

  static async redis(): Promise<DedicatedServer> {
    const server = new DedicatedServer(await freePort(), 'redis-server', (port) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
    ]);
    await server.start();
    return server;
  }

  static async nats(storeDir: string): Promise<DedicatedServer> {
    const server = new DedicatedServer(await freePort(), 'nats-server', (port) => [
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-js',
      '-sd',
      storeDir,
    ]);
    await server.start();
    return server;
  }

  get url(): string {
    return this.command === 'redis-server' ? `redis://127.0.0.1:${this.port}` : `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child) return;
    this.child = spawn(this.command, this.args(this.port), { stdio: 'ignore' });
    await waitFor(`${this.command} on ${this.port}`, async () => ((await canConnect(this.port)) ? true : undefined));
  }

  /** Signals the running server: SIGSTOP hangs it (its sockets stay open, nothing answers), SIGCONT resumes it. */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** SIGKILL: the server vanishes the way a crash or a lost node would. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
