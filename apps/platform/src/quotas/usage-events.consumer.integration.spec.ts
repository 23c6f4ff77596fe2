import { randomUUID } from 'node:crypto';

import { USAGE_REPORTED, USER_CREATED, USER_DELETED } from '@acct/events';
import { isQuota, USERS_QUOTA, VCPU_QUOTA } from '@acct/limits';
import { createSpecDatabase, SpecDatabase } from '@acct/testing';
import { JsMsg } from 'nats';

import { loadPlatformConfig } from '../config';
import { PrismaService } from '../prisma/prisma.service';
import { QuotasRepository } from './quotas.repository';
import { UsageReportedConsumer, UserCountConsumer } from './usage-events.consumer';

jest.setTimeout(60_000);

const AT = '2026-11-28T10:00:00.000Z';

/** An identity event about one user, as JetStream delivers it (a redelivery keeps its id). */
function userEvent(type: typeof USER_CREATED | typeof USER_DELETED, orgId: string, userId: string, id = randomUUID()) {
  const data =
    type === USER_CREATED
      ? {
          user_id: userId,
          org_id: orgId,
          email: `${userId}@example.test`,
          display_name: 'Someone',
          locale: 'en',
          send_activation: false,
        }
      : { user_id: userId, org_id: orgId, occurred_at: AT };
  const body = JSON.stringify({ id, type, version: 1, occurred_at: AT, data });
  return { subject: type, seq: 1, string: () => body } as unknown as JsMsg;
}

/**
 * The org's Users as two platform replicas pulling from the one durable consumer count them: an
 * event can be redelivered, and a user's deletion can be applied before its creation.
 */
describe("UserCountConsumer: an org's Users (real Postgres)", () => {
  let database: SpecDatabase;
  let prisma: PrismaService;
  let repository: QuotasRepository;
  /** Two replicas: two consumers on the one database (never started: deliveries are driven by hand). */
  let replicas: [UserCountConsumer, UserCountConsumer];

  beforeAll(async () => {
    database = await createSpecDatabase('platform');
    const config = loadPlatformConfig({ PLATFORM_DATABASE_URL: database.url, NATS_URL: 'nats://127.0.0.1:9' });
    prisma = new PrismaService(config);
    repository = new QuotasRepository(prisma);
    replicas = [new UserCountConsumer(repository, config), new UserCountConsumer(repository, config)];
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  const usersOf = async (orgId: string) =>
    (await repository.stateOf(orgId)).usage.find((row) => isQuota(row, USERS_QUOTA))?.used ?? 0;

  const deliver = async (message: JsMsg, replica = 0) => {
    await expect(replicas[replica].handle(message)).resolves.toBe('ack');
  };

  it('leaves the count as it was when a deletion is applied before its creation, in an org with no other user', async () => {
    const org = randomUUID();
    const user = randomUUID();
    await deliver(userEvent(USER_DELETED, org, user), 1);
    expect(await usersOf(org)).toBe(0);
    await deliver(userEvent(USER_CREATED, org, user), 0);
    expect(await usersOf(org)).toBe(0);
  });

  it("leaves the other users' count whole when a deletion is applied before its creation", async () => {
    const org = randomUUID();
    await deliver(userEvent(USER_CREATED, org, randomUUID()));
    const user = randomUUID();
    await deliver(userEvent(USER_DELETED, org, user), 1);
    expect(await usersOf(org)).toBe(1);
    await deliver(userEvent(USER_CREATED, org, user), 0);
    expect(await usersOf(org)).toBe(1);
  });

  it("counts a user's creation once and its deletion once, however often each is delivered", async () => {
    const org = randomUUID();
    const user = randomUUID();
    const created = userEvent(USER_CREATED, org, user);
    await deliver(created, 0);
    await deliver(created, 1); // redelivered to the other replica
    await deliver(userEvent(USER_CREATED, org, user)); // the same creation under another event id
    expect(await usersOf(org)).toBe(1);
    await deliver(userEvent(USER_CREATED, org, randomUUID()));
    expect(await usersOf(org)).toBe(2);

    const deleted = userEvent(USER_DELETED, org, user);
    await deliver(deleted, 0);
    await deliver(deleted, 1);
    await deliver(userEvent(USER_DELETED, org, user));
    expect(await usersOf(org)).toBe(1);
  });

  it("counts right when each user's creation and deletion reach the two replicas at the same time", async () => {
    const org = randomUUID();
    const kept = Array.from({ length: 5 }, () => randomUUID());
    const gone = Array.from({ length: 20 }, () => randomUUID());
    await Promise.all([
      ...kept.map((user, index) => deliver(userEvent(USER_CREATED, org, user), index % 2)),
      ...gone.flatMap((user, index) => [
        deliver(userEvent(USER_CREATED, org, user), index % 2),
        deliver(userEvent(USER_DELETED, org, user), (index + 1) % 2),
      ]),
    ]);
    expect(await usersOf(org)).toBe(kept.length);
  });
});

/** A `platform.usage.reported` gauge of an org's vCPU cores, stamped `occurredAt` by its publisher. */
function usageReport(orgId: string, used: number, occurredAt: string) {
  const data = { org_id: orgId, dimension: VCPU_QUOTA.dimension, name: VCPU_QUOTA.name, used };
  const body = JSON.stringify({ id: randomUUID(), type: USAGE_REPORTED, version: 1, occurred_at: occurredAt, data });
  return { subject: USAGE_REPORTED, seq: 1, string: () => body } as unknown as JsMsg;
}

describe("UsageReportedConsumer: an org's reported gauges (real Postgres)", () => {
  let database: SpecDatabase;
  let prisma: PrismaService;
  let repository: QuotasRepository;
  let consumer: UsageReportedConsumer;

  beforeAll(async () => {
    database = await createSpecDatabase('platform');
    const config = loadPlatformConfig({ PLATFORM_DATABASE_URL: database.url, NATS_URL: 'nats://127.0.0.1:9' });
    prisma = new PrismaService(config);
    repository = new QuotasRepository(prisma);
    consumer = new UsageReportedConsumer(repository, config);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  const coresOf = async (orgId: string) =>
    (await repository.stateOf(orgId)).usage.find((row) => isQuota(row, VCPU_QUOTA))?.used;

  const deliver = async (message: JsMsg) => {
    await expect(consumer.handle(message)).resolves.toBe('ack');
  };

  it('keeps an older report from overwriting a newer one that arrived first', async () => {
    const org = randomUUID();
    await deliver(usageReport(org, 8, '2026-11-28T10:00:01.000Z'));
    await deliver(usageReport(org, 4, '2026-11-28T10:00:00.000Z'));
    expect(await coresOf(org)).toBe(8);
  });

  it('keeps an older report from overwriting a newer one stamped within the same millisecond', async () => {
    // A publisher stamping microseconds (or nanoseconds, as Go's time does) sends two reports in one
    // millisecond: the later stamp wins whatever order they arrive in.
    const org = randomUUID();
    await deliver(usageReport(org, 8, '2026-11-28T10:00:00.000900Z'));
    await deliver(usageReport(org, 4, '2026-11-28T10:00:00.000100Z'));
    expect(await coresOf(org)).toBe(8);
  });

  it('lets later reports win over one stamped in the future by a publisher whose clock is ahead', async () => {
    const org = randomUUID();
    // A publisher's clock a year ahead (or a typo in its stamp): the report is applied, as received now...
    await deliver(usageReport(org, 8, new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString()));
    expect(await coresOf(org)).toBe(8);
    // ...and does not freeze the gauge: the next report, from a publisher with a right clock, wins.
    await new Promise((resolve) => setTimeout(resolve, 10));
    await deliver(usageReport(org, 2, new Date().toISOString()));
    expect(await coresOf(org)).toBe(2);
  });

  it.each([
    ['in year 0000', '0000-01-01T00:00:00Z'],
    ['with an offset of 16 hours', '2026-11-28T10:00:00+16:00'],
    ['with an offset of -23:59', '2026-11-28T10:00:00-23:59'],
  ])(
    'refuses a report stamped %s, which RFC 3339 writes and Postgres cannot store, instead of retrying it for ever',
    async (_, occurredAt) => {
      const org = randomUUID();
      await expect(consumer.handle(usageReport(org, 8, occurredAt))).resolves.toBe('reject');
      expect(await coresOf(org)).toBeUndefined();
    },
  );

  it.each(['0001-01-01T00:00:00Z', '2026-11-28T10:00:00+15:59', '2026-11-28T10:00:00-15:59'])(
    'applies a report stamped %s, at the edge of what Postgres stores',
    async (occurredAt) => {
      const org = randomUUID();
      await deliver(usageReport(org, 8, occurredAt));
      expect(await coresOf(org)).toBe(8);
    },
  );
});
