import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { STREAMS, USER_CREATED, USER_DELETED } from '@acct/events';
import { DedicatedServer, waitFor } from '@acct/testing';
import { AckPolicy, connect, DeliverPolicy } from 'nats';
import { Registry } from 'prom-client';

import { IdentityConfig, loadIdentityConfig } from '../config';
import { PrismaService } from '../prisma/prisma.service';
import { Transactions } from '../prisma/transactions';
import { createSpecDatabase, SpecDatabase } from '../testing/spec-database';
import { OutboxRelay } from './outbox.relay';
import { OutboxRepository } from './outbox.repository';

/** The relay against a real database and the shared NATS (JetStream). */
describe('OutboxRelay (real Postgres and NATS)', () => {
  let database: SpecDatabase;
  let config: IdentityConfig;
  let prisma: PrismaService;
  let outbox: OutboxRepository;

  const userDeleted = () => {
    const data = { user_id: randomUUID(), org_id: randomUUID(), occurred_at: new Date().toISOString() };
    return outbox.append(prisma, USER_DELETED, data, new Date());
  };
  const publishedAt = async (id: string) =>
    (await prisma.outboxEvent.findUniqueOrThrow({ where: { id } })).publishedAt ?? undefined;

  beforeAll(async () => {
    database = await createSpecDatabase();
    config = loadIdentityConfig({ IDENTITY_DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
    prisma = new PrismaService(config);
    outbox = new OutboxRepository(prisma);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  it('says whether any event awaits publishing', async () => {
    expect(await outbox.hasPending()).toBe(false);
    const id = await userDeleted();
    expect(await outbox.hasPending()).toBe(true);
    await outbox.markPublished(prisma, [id], new Date());
    expect(await outbox.hasPending()).toBe(false);
  });

  it('publishes, while idle, an event committed without a nudge (by another instance), and one nudged', async () => {
    const relay = new OutboxRelay(outbox, new Transactions(prisma), config, new Registry());
    relay.onApplicationBootstrap();
    try {
      // Idle first: the relay's first batch found nothing, and it now looks every IDLE_MS.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const unannounced = await userDeleted();
      await waitFor('the unannounced event published', () => publishedAt(unannounced), { timeoutMs: 5000 });
      const nudged = await userDeleted();
      relay.nudge();
      await waitFor('the nudged event published', () => publishedAt(nudged), { timeoutMs: 5000 });
      expect(await outbox.hasPending()).toBe(false);
    } finally {
      await relay.onModuleDestroy();
    }
  });
});

/**
 * Two identity instances each run a relay: after a NATS outage both find the backlog at once. The
 * stream must still hold the events in the order they happened: the platform counts an org's Users
 * from `identity.user.created` and `.deleted` in stream order, and a deletion read before its creation
 * is lost (the count never goes below zero) while the creation is counted, for good.
 */
describe('OutboxRelay, two instances (real Postgres, a NATS of its own)', () => {
  let database: SpecDatabase;
  let nats: DedicatedServer;
  let natsDir: string;
  let prisma: PrismaService;
  let outbox: OutboxRepository;
  let config: IdentityConfig;

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-order-nats-'));
    [database, nats] = await Promise.all([createSpecDatabase(), DedicatedServer.nats(natsDir)]);
    config = loadIdentityConfig({ IDENTITY_DATABASE_URL: database.url, NATS_URL: nats.url, LOG_LEVEL: 'silent' });
    prisma = new PrismaService(config);
    outbox = new OutboxRepository(prisma);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await Promise.all([database?.drop(), nats?.stop()]);
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  /** The ids of the stream's messages, in stream order. */
  async function streamOrder(count: number): Promise<string[]> {
    const connection = await connect({ servers: nats.url });
    try {
      const jsm = await connection.jetstreamManager();
      await jsm.consumers.add(STREAMS.identity.name, {
        durable_name: 'order-check',
        ack_policy: AckPolicy.None,
        deliver_policy: DeliverPolicy.All,
      });
      const consumer = await connection.jetstream().consumers.get(STREAMS.identity.name, 'order-check');
      const ids: string[] = [];
      const messages = await consumer.fetch({ max_messages: count, expires: 5000 });
      for await (const message of messages) ids.push(message.json<{ id: string }>().id);
      return ids;
    } finally {
      await connection.close();
    }
  }

  it('publishes a backlog in the order it was written, also when both relays take it up at once', async () => {
    const base = Date.now() - 60_000;
    const written: string[] = [];
    const orgId = randomUUID();
    // A backlog of two batches and more; a user created at the end of the first and deleted right after.
    const deletedUser = randomUUID();
    for (let index = 0; index < 120; index += 1) {
      const at = new Date(base + index * 10);
      const userId = index === 49 || index === 50 ? deletedUser : randomUUID();
      written.push(
        index === 50
          ? await outbox.append(
              prisma,
              USER_DELETED,
              { user_id: userId, org_id: orgId, occurred_at: at.toISOString() },
              at,
            )
          : await outbox.append(
              prisma,
              USER_CREATED,
              {
                user_id: userId,
                org_id: orgId,
                email: `u${index}@order.test`,
                display_name: 'U',
                locale: 'en',
                send_activation: false,
              },
              at,
            ),
      );
    }
    const relays = [1, 2].map(() => new OutboxRelay(outbox, new Transactions(prisma), config, new Registry()));
    try {
      // Both instances' loops wake up together (the broker is back): each publishes what it finds.
      await Promise.all(
        relays.map(async (relay) => {
          while ((await relay.publishBatch()) > 0);
        }),
      );
      expect(await outbox.hasPending()).toBe(false);
      expect(await streamOrder(written.length)).toEqual(written);
    } finally {
      for (const relay of relays) await relay.onModuleDestroy();
    }
  }, 60_000);
});

/**
 * A TCP proxy that holds every chunk `delayMs` in each direction, in order: a broker a round trip of
 * 2 × `delayMs` away (another region, a replicated stream waiting for its followers, a loaded server).
 */
async function startSlowProxy(targetPort: number, delayMs: number) {
  const sockets = new Set<net.Socket>();
  const delayed = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), delayMs));
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    delayed(client, upstream);
    delayed(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `nats://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A broker a quarter of a second away: each publish waits a round trip for its ack, so a batch of 50
 * takes longer than the transaction that locked it may stay open. The relay must still make progress.
 */
describe('OutboxRelay, a slow broker (real Postgres, a NATS of its own behind a slow link)', () => {
  let database: SpecDatabase;
  let nats: DedicatedServer;
  let natsDir: string;
  let proxy: Awaited<ReturnType<typeof startSlowProxy>>;
  let prisma: PrismaService;
  let outbox: OutboxRepository;
  let config: IdentityConfig;

  beforeAll(async () => {
    natsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-slow-nats-'));
    [database, nats] = await Promise.all([createSpecDatabase(), DedicatedServer.nats(natsDir)]);
    proxy = await startSlowProxy(nats.port, 125);
    config = loadIdentityConfig({ IDENTITY_DATABASE_URL: database.url, NATS_URL: proxy.url, LOG_LEVEL: 'silent' });
    prisma = new PrismaService(config);
    outbox = new OutboxRepository(prisma);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await proxy?.close();
    await Promise.all([database?.drop(), nats?.stop()]);
    fs.rmSync(natsDir, { recursive: true, force: true });
  });

  it('publishes a backlog of more than a batch although a full batch outlasts its transaction', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 60; index += 1) {
      const data = { user_id: randomUUID(), org_id: randomUUID(), occurred_at: new Date().toISOString() };
      ids.push(await outbox.append(prisma, USER_DELETED, data, new Date(Date.now() - 60_000 + index)));
    }
    const relay = new OutboxRelay(outbox, new Transactions(prisma), config, new Registry());
    relay.onApplicationBootstrap();
    try {
      // 60 round trips of 250 ms: 15 s of publishing, however it is cut into transactions. Each batch
      // of 50 (12.5 s and more) ran past the transaction's 10 s: rolled back, published again, for ever.
      await waitFor('the backlog published', async () => ((await outbox.hasPending()) ? undefined : true), {
        timeoutMs: 60_000,
      });
      for (const id of ids) expect(await publishedAt(id)).toBeInstanceOf(Date);
    } finally {
      await relay.onModuleDestroy();
    }
  }, 120_000);

  const publishedAt = async (id: string) =>
    (await prisma.outboxEvent.findUniqueOrThrow({ where: { id } })).publishedAt ?? undefined;
});
