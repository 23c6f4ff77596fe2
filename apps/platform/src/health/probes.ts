import { createHealthClient, HealthClient } from '@acct/grpc';
import { failFastRedis } from '@acct/redis';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import Redis from 'ioredis';
import { connect, NatsConnection } from 'nats';

import { PrismaService } from '../prisma/prisma.service';

/** One dependency the platform watches. `run` rejects when the dependency does not answer properly. */
export interface Probe {
  readonly component: string;
  readonly critical: boolean;
  run(timeoutMs: number): Promise<void>;
  /** Closes what the probe holds open (a connection, a client); the monitor calls it on shutdown. */
  close?(): Promise<void> | void;
}

export class DatabaseProbe implements Probe {
  readonly component = 'database';
  readonly critical = true;
  constructor(private readonly prisma: PrismaService) {}

  async run() {
    await this.prisma.$queryRaw`SELECT 1`;
  }
}

/** The key the cache probe writes, and how long it is kept. */
const PROBE_KEY = 'health:cache-probe';
const PROBE_KEY_TTL_MS = 60_000;

/**
 * Redis: a write of a short-lived key, not a PING. The gateways' buckets and API counts and every
 * revocation are writes, and a Redis that answers PING may refuse them all (a primary turned replica
 * by a failover: READONLY; out of memory: OOM). Commands fail at once while disconnected instead of
 * queueing; only the first connection, still opening when the platform's first round runs, is waited
 * for (within the probe's timeout), so a Redis that is there is not reported down at start.
 */
export class CacheProbe implements Probe {
  readonly component = 'cache';
  readonly critical = false;
  private readonly redis: Redis;
  private readonly firstConnection: Promise<void>;

  constructor(url: string, timeoutMs: number, keyPrefix = '') {
    // Its failures are reported through the probe.
    this.redis = failFastRedis(url, {
      keyPrefix,
      commandTimeoutMs: timeoutMs,
      connectTimeoutMs: timeoutMs,
      retryStepMs: 200,
    });
    this.firstConnection = new Promise((resolve) => this.redis.once('ready', () => resolve()));
  }

  async run() {
    await this.firstConnection;
    const answer = await this.redis.set(PROBE_KEY, String(Date.now()), 'PX', PROBE_KEY_TTL_MS);
    if (answer !== 'OK') throw new Error(`unexpected SET answer ${String(answer)}`);
  }

  close() {
    this.redis.disconnect();
  }
}

/** The S3-compatible store: HEAD of the bucket the mailer writes to. */
export class ObjectStorageProbe implements Probe {
  readonly component = 'object_storage';
  readonly critical = false;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async run(timeoutMs: number) {
    await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
  }

  close() {
    this.s3.destroy();
  }
}

/**
 * NATS: a round trip to its JetStream (the account's info) on a connection that reconnects by itself.
 * Every event is a JetStream message (the outbox publishes to streams, the consumers are durable), and
 * a server may answer while its JetStream does not (not enabled, no meta leader in a cluster).
 */
export class MessageBusProbe implements Probe {
  readonly component = 'message_bus';
  readonly critical = false;
  private connection?: NatsConnection;
  private connecting?: Promise<NatsConnection>;

  constructor(private readonly url: string) {}

  async run(timeoutMs: number) {
    const connection = await this.connected(timeoutMs);
    if (connection.isClosed()) {
      this.connection = undefined;
      throw new Error('connection closed');
    }
    const jetStream = await connection.jetstreamManager({ timeout: timeoutMs, checkAPI: false });
    await jetStream.getAccountInfo();
  }

  private async connected(timeoutMs: number): Promise<NatsConnection> {
    if (this.connection) return this.connection;
    this.connecting ??= connect({
      servers: this.url,
      name: 'platform-health-probe',
      timeout: timeoutMs,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    }).finally(() => (this.connecting = undefined));
    this.connection = await this.connecting;
    return this.connection;
  }

  async close() {
    await this.connection?.close();
  }
}

/** A backend service: `grpc.health.v1.Health/Check` must answer SERVING. */
export class BackendServiceProbe implements Probe {
  readonly critical = true;
  private readonly client: HealthClient;

  constructor(
    readonly component: string,
    address: string,
    protoDir?: string,
  ) {
    this.client = createHealthClient(address, protoDir);
  }

  async run(timeoutMs: number) {
    const status = await this.client.check(timeoutMs);
    if (status !== 'SERVING') throw new Error(`health status ${status}`);
  }

  close() {
    this.client.close();
  }
}

export const PROBES = Symbol('PROBES');
