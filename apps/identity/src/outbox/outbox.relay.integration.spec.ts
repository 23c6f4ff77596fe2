import { randomUUID } from 'node:crypto';

import { USER_DELETED } from '@acct/events';
import { waitFor } from '@acct/testing';
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
