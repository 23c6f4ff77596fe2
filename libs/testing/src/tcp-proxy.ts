import net from 'node:net';

import { freePort } from './ports';

/**
 * A TCP proxy in front of a shared server (Postgres), so a test can make that server unreachable for
 * the processes it started without touching the server other tests use.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private readonly held = new Set<net.Socket>();
  private hung = false;

  private constructor(
    readonly port: number,
    private readonly targetPort: number,
    private readonly targetHost: string,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), targetPort, targetHost);
    await proxy.resume();
    return proxy;
  }

  /** Accepts connections again, on the same port. */
  resume(): Promise<void> {
    if (this.server) return Promise.resolve();
    const server = net.createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => {
        this.sockets.delete(client);
        this.held.delete(client);
      });
      client.on('error', () => client.destroy());
      if (this.hung) {
        client.pause();
        this.held.add(client);
      } else this.forward(client);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  private forward(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => upstream.destroy());
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    client.pipe(upstream).pipe(client);
    client.on('close', () => {
      upstream.destroy();
      this.pairs.delete(pair);
    });
    upstream.on('close', () => client.destroy());
  }

  /**
   * Hangs the server the way SIGSTOP would: connections stay open and new ones are accepted, but no
   * byte moves in either direction until `unhang`.
   */
  hang(): void {
    this.hung = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Lets every held byte and connection through again. */
  unhang(): void {
    this.hung = false;
    for (const [client, upstream] of this.pairs) {
      client.pipe(upstream);
      upstream.pipe(client);
    }
    for (const client of this.held) this.forward(client);
    this.held.clear();
  }

  /**
   * Strands every open connection the way a failover or a network partition does: no byte moves on it
   * ever again and no reset comes (the peer is gone, not refusing), while new connections go through
   * to the server as before.
   */
  strand(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
    this.pairs.clear();
  }

  /** Cuts every open connection and refuses new ones. */
  cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.pairs.clear();
    this.held.clear();
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}
