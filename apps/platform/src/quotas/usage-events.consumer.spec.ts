import { USAGE_REPORTED, USER_ACTIVATED, USER_CREATED, USER_DELETED } from '@acct/events';
import { Logger } from '@nestjs/common';
import { JsMsg } from 'nats';

import { loadPlatformConfig } from '../config';
import { EventEffect, QuotasRepository } from './quotas.repository';
import { UsageReportedConsumer, UserCountConsumer } from './usage-events.consumer';

const ORG = 'org-1';
const AT = '2026-11-22T10:00:00.000Z';

interface Applied {
  eventId: string;
  type: string;
  /** The statement of the event's effect: its SQL and the values bound to it. */
  statements: Array<{ sql: string; values: unknown[] }>;
}

/** A repository that records what each event applies; an id seen before is a duplicate (not applied). */
function recordingRepository() {
  const applied: Applied[] = [];
  const seen = new Set<string>();
  const repository = {
    applyOnce: (eventId: string, type: string, effect: EventEffect) => {
      if (seen.has(eventId)) return Promise.resolve(false);
      seen.add(eventId);
      applied.push({ eventId, type, statements: [{ sql: effect.statement, values: effect.values }] });
      return Promise.resolve(true);
    },
  };
  return { repository: repository as unknown as QuotasRepository, applied };
}

const message = (subject: string, body: unknown, seq = 1) =>
  ({ subject, seq, string: () => (typeof body === 'string' ? body : JSON.stringify(body)) }) as unknown as JsMsg;

const event = (type: string, data: Record<string, unknown>, id = '7f1f3a52-4c1e-4d7b-9a43-0d2b8c1e9a10') => ({
  id,
  type,
  version: 1,
  occurred_at: AT,
  data,
});

const userData = {
  user_id: '0b6f1c1e-2a51-4f8e-9d0a-3b8c6f2d7e11',
  org_id: ORG,
  email: 'ada@example.test',
  display_name: 'Ada',
  locale: 'en',
  send_activation: false,
};

describe('UsageReportedConsumer and UserCountConsumer', () => {
  let usage: UsageReportedConsumer;
  let users: UserCountConsumer;
  let applied: Applied[];

  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  beforeEach(() => {
    const recording = recordingRepository();
    applied = recording.applied;
    // Consumers connect only when started; this test never starts them.
    usage = new UsageReportedConsumer(recording.repository, loadPlatformConfig({}));
    users = new UserCountConsumer(recording.repository, loadPlatformConfig({}));
  });

  it("counts one more of the org's Users for identity.user.created, by user, at the event's time", async () => {
    await expect(users.handle(message(USER_CREATED, event(USER_CREATED, userData)))).resolves.toBe('ack');
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ type: USER_CREATED });
    const [statement] = applied[0].statements;
    expect(statement.values).toEqual([ORG, userData.user_id, 'api', 'Users', new Date(AT)]);
    expect(statement.sql).toContain('GREATEST(quota_usage.used + (1), 0)');
  });

  it('counts one fewer, never below zero, for identity.user.deleted, by user', async () => {
    const deleted = event(USER_DELETED, { user_id: userData.user_id, org_id: ORG, occurred_at: AT });
    await expect(users.handle(message(USER_DELETED, deleted))).resolves.toBe('ack');
    expect(applied).toHaveLength(1);
    const [statement] = applied[0].statements;
    expect(statement.values).toEqual([ORG, userData.user_id, 'api', 'Users', new Date(AT)]);
    expect(statement.sql).toContain('GREATEST(quota_usage.used + (-1), 0)');
  });

  it('acknowledges the other identity events without counting them as usage', async () => {
    const activated = event(USER_ACTIVATED, { user_id: userData.user_id, org_id: ORG });
    await expect(users.handle(message(USER_ACTIVATED, activated))).resolves.toBe('ack');
    expect(applied).toEqual([]);
  });

  it('keys each event by its id, so a redelivery is applied once', async () => {
    const created = message(USER_CREATED, event(USER_CREATED, userData));
    await users.handle(created);
    await expect(users.handle(created)).resolves.toBe('ack');
    expect(applied).toHaveLength(1);
  });

  it('sets a reported gauge to the reported value, the latest report winning', async () => {
    const data = { org_id: ORG, dimension: 'compute', name: 'vCPU cores', used: 12.5 };
    await expect(usage.handle(message(USAGE_REPORTED, event(USAGE_REPORTED, data)))).resolves.toBe('ack');
    const [statement] = applied[0].statements;
    expect(statement.values).toEqual([ORG, 'compute', 'vCPU cores', 12.5, AT]);
    expect(statement.sql).toContain('WHERE quota_usage.reported_at <= EXCLUDED.reported_at');
  });

  it("counts a report naming its org's id in capitals for that org (the quota is read under the id in lower case)", async () => {
    const orgId = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const data = { org_id: orgId.toUpperCase(), dimension: 'compute', name: 'Instances', used: 3 };
    await expect(usage.handle(message(USAGE_REPORTED, event(USAGE_REPORTED, data)))).resolves.toBe('ack');
    const [statement] = applied[0].statements;
    expect(statement.values).toEqual([orgId, 'compute', 'Instances', 3, AT]);
  });

  it('rejects (never redelivers) a message that is not JSON or not the event it claims to be, and counts nothing', async () => {
    await expect(users.handle(message(USER_CREATED, '{not json'))).resolves.toBe('reject');
    const { org_id: _missing, ...withoutOrg } = userData;
    await expect(users.handle(message(USER_CREATED, event(USER_CREATED, withoutOrg)))).resolves.toBe('reject');
    const negative = { org_id: ORG, dimension: 'compute', name: 'vCPU cores', used: -1 };
    await expect(usage.handle(message(USAGE_REPORTED, event(USAGE_REPORTED, negative)))).resolves.toBe('reject');
    expect(applied).toEqual([]);
  });

  it('rejects a usage report whose org_id holds a control character (Postgres cannot store a NUL: retried for ever)', async () => {
    for (const orgId of ['org\u0000-1', 'org-1\n', '\u0085org']) {
      const report = { org_id: orgId, dimension: 'compute', name: 'vCPU cores', used: 1 };
      await expect(usage.handle(message(USAGE_REPORTED, event(USAGE_REPORTED, report)))).resolves.toBe('reject');
    }
    expect(applied).toEqual([]);
  });
});
