import { createHealthClient, HealthClient } from '@acct/grpc';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { connect, NatsConnection } from 'nats';

import { PrismaService } from '../prisma/prisma.service';

/** One dependency the platform watches. `run` rejects when the dependency does not answer properly. */
export interface Probe {
  readonly component: string;
  readonly critical: boolean;
  run(timeoutMs: number): Promise<void>;
}

export class DatabaseProbe implements Probe {
  readonly component = 'database';
  readonly critical = true;
  constructor(private readonly prisma: PrismaService) {}

  async run() {
    await this.prisma.$queryRaw`SELECT 1`;
  }
}

/** Redis: PING. Commands fail at once while disconnected instead of queueing. */
export class CacheProbe implements Probe, OnModuleDestroy {
  readonly component = 'cache';
  readonly critical = false;
  private readonly redis: Redis;

  constructor(url: string, timeoutMs: number) {
    this.redis = new Redis(url, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    this.redis.on('error', () => undefined); // reported through the probe, not as an unhandled event
  }

  async run() {
    const answer = await this.redis.ping();
    if (answer !== 'PONG') throw new Error(`unexpected PING answer ${String(answer)}`);
  }

  onModuleDestroy() {
    this.redis.disconnect();
  }
}

/** The S3-compatible store: HEAD of the bucket the mailer writes to. */
export class ObjectStorageProbe implements Probe, OnModuleDestroy {
  readonly component = 'object_storage';
  readonly critical = false;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async run(timeoutMs: number) {
    await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
  }

  onModuleDestroy() {
    this.s3.destroy();
  }
}

/** NATS: a round trip to the server on a connection that reconnects by itself. */
export class MessageBusProbe implements Probe, OnModuleDestroy {
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
    await connection.rtt();
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

  async onModuleDestroy() {
    await this.connection?.close();
  }
}

/** A backend service: `grpc.health.v1.Health/Check` must answer SERVING. */
export class BackendServiceProbe implements Probe, OnModuleDestroy {
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

  onModuleDestroy() {
    this.client.close();
  }
}

export const PROBES = Symbol('PROBES');
