import { randomUUID } from 'node:crypto';

import { FakeClock } from '@acct/clock';
import { USAGE_REPORTED } from '@acct/events';
import { createSpecDatabase, SpecDatabase } from '@acct/testing';

import { loadPlatformConfig } from '../config';
import { PrismaService } from '../prisma/prisma.service';
import { KEEP_PROCESSED_MS, ProcessedEventPruner } from './processed-event-pruner';
import { QuotasRepository, setGauge } from './quotas.repository';

jest.setTimeout(60_000);

const ORG = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';

describe('processed event retention (real Postgres, injected clock)', () => {
  let database: SpecDatabase;
  let prisma: PrismaService;
  let repository: QuotasRepository;

  beforeAll(async () => {
    database = await createSpecDatabase('platform');
    const config = loadPlatformConfig({ PLATFORM_DATABASE_URL: database.url, NATS_URL: 'nats://127.0.0.1:9' });
    prisma = new PrismaService(config);
    repository = new QuotasRepository(prisma);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  it('forgets the ids of applied events once no stream can deliver them again', async () => {
    const report = (id: string, used: number, at: string) =>
      repository.applyOnce(id, USAGE_REPORTED, setGauge(ORG, 'storage', 'Storage', used, at));
    const old = randomUUID();
    expect(await report(old, 5, '2026-11-28T10:00:00.000Z')).toBe(true);
    expect(await report(old, 5, '2026-11-28T10:00:00.000Z')).toBe(false); // a redelivery
    const clock = new FakeClock();
    const pruner = new ProcessedEventPruner(repository, clock);
    expect(await pruner.prune()).toBe(0); // still deliverable
    expect(await prisma.processedEvent.count()).toBe(1);

    clock.advance(KEEP_PROCESSED_MS + 60_000);
    expect(await pruner.prune()).toBe(1);
    expect(await prisma.processedEvent.count()).toBe(0);
    // Were it republished after all, a newer report still wins.
    expect(await report(randomUUID(), 7, '2026-11-28T11:00:00.000Z')).toBe(true);
    await report(old, 5, '2026-11-28T10:00:00.000Z');
    expect((await repository.stateOf(ORG)).usage).toEqual([{ dimension: 'storage', name: 'Storage', used: 7 }]);
  });
});
