import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { freePort } from './ports';

// s3rver has no types of its own.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => {
  run(): Promise<unknown>;
  close(): Promise<void>;
  httpServer?: Server;
};

/** An S3-compatible store (s3rver) on a spare port with one bucket, data in a temporary folder. */
export class LocalObjectStorage {
  private server?: InstanceType<typeof S3rver>;

  private constructor(
    readonly port: number,
    readonly bucket: string,
    private readonly directory: string,
  ) {}

  static async start(bucket = 'account-platform'): Promise<LocalObjectStorage> {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
    const storage = new LocalObjectStorage(await freePort(), bucket, directory);
    await storage.resume();
    return storage;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async resume(): Promise<void> {
    if (this.server) return;
    this.server = new S3rver({
      port: this.port,
      address: '127.0.0.1',
      silent: true,
      directory: this.directory,
      configureBuckets: [{ name: this.bucket }],
    });
    await this.server.run();
  }

  /** Stops it as a crash or restart would: open connections (keep-alive, requests in flight) are dropped. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = server.close(); // on its own, waits for every open connection to end
    server.httpServer?.closeAllConnections();
    await closed;
  }

  async dispose(): Promise<void> {
    await this.stop();
    fs.rmSync(this.directory, { recursive: true, force: true });
  }
}
