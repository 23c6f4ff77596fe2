import { randomUUID } from 'node:crypto';

import { FakeClock } from '@acct/clock';
import { USER_DELETED } from '@acct/events';

import { loadIdentityConfig } from '../config';
import { PrismaService } from '../prisma/prisma.service';
import { createSpecDatabase, SpecDatabase } from '../testing/spec-database';
import { OutboxRepository } from './outbox.repository';
import { OUTBOX_RETENTION_MS, OutboxPruner } from './outbox-pruner';

/** Published events go once the stream no longer keeps them; what awaits publishing stays, however old. */
describe('outbox retention (real Postgres, injected clock)', () => {
  let database: SpecDatabase;
  let prisma: PrismaService;
  let outbox: OutboxRepository;

  const event = async (createdAt: Date, publishedAt?: Date) => {
    const data = { user_id: randomUUID(), org_id: randomUUID(), occurred_at: createdAt.toISOString() };
    const id = await outbox.append(prisma, USER_DELETED, data, createdAt);
    if (publishedAt) await prisma.$transaction((tx) => outbox.markPublished(tx, [id], publishedAt));
    return id;
  };
  const remaining = async () => (await prisma.outboxEvent.findMany({ select: { id: true } })).map((row) => row.id);

  beforeAll(async () => {
    database = await createSpecDatabase();
    prisma = new PrismaService(loadIdentityConfig({ IDENTITY_DATABASE_URL: database.url, LOG_LEVEL: 'silent' }));
    outbox = new OutboxRepository(prisma);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  it('deletes an event published longer ago than the retention, never a later one or one still to publish', async () => {
    const clock = new FakeClock();
    const long = new Date(clock.now() - OUTBOX_RETENTION_MS - 60_000);
    const gone = await event(long, new Date(clock.now() - OUTBOX_RETENTION_MS));
    const recent = await event(long, new Date(clock.now() - OUTBOX_RETENTION_MS + 1));
    const waiting = await event(long);

    expect(await new OutboxPruner(outbox, clock).prune()).toBe(1);
    expect((await remaining()).sort()).toEqual([recent, waiting].sort());
    expect(await remaining()).not.toContain(gone);
  });
});
