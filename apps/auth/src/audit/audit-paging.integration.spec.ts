import { pgDatabase } from '@acct/database';

import { PrismaClient } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { AdminAuditRepository } from './admin-audit.repository';
import { AuditPosition } from './audit-cursor';
import { LoginAuditRepository } from './login-audit.repository';

const ORG = '6b1e4c1a-5b8e-4c33-9a53-1f2b3c4d5e6f';
const USER = '8c0b6a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
const ROWS = 5000;

interface PlanNode {
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The rows a plan's scans read from the table or its index, kept or filtered out. */
const rowsRead = (node: PlanNode): number =>
  node.Plans
    ? node.Plans.reduce((sum, child) => sum + rowsRead(child), 0)
    : (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0);

describe('audit pages deep in a large org (real Postgres)', () => {
  let database: TestDatabase;
  let prisma: PrismaClient<'query'>;
  const statements: { sql: string; params: unknown[] }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    // One entry a second, the oldest 5000 s ago: the login audit's half of them the user's own.
    await database.query(
      `INSERT INTO login_audit (id, at, grant_type, username, subject, org_id, client_id, client_ip, device_id,
                                user_agent, outcome, reason)
       SELECT gen_random_uuid(), now() - make_interval(secs => i), 'password', 'u@example.test',
              CASE WHEN i % 2 = 0 THEN $2 END, $1, 'web', '203.0.113.5', '', '', 'failure', 'invalid_grant'
       FROM generate_series(1, $3::int) AS i`,
      [ORG, USER, ROWS],
    );
    await database.query(
      `INSERT INTO admin_audit (id, at, org_id, actor_id, action, target_type, target_id, request_id)
       SELECT gen_random_uuid(), now() - make_interval(secs => i), $1, $2, 'user.updated', 'user', $2, ''
       FROM generate_series(1, $3::int) AS i`,
      [ORG, USER, ROWS],
    );
    await database.query('ANALYZE login_audit; ANALYZE admin_audit');
    const { adapter, direct } = pgDatabase(database.url);
    prisma = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
    prisma.$on('query', (event) => statements.push({ sql: event.query, params: JSON.parse(event.params) }));
    Object.assign(prisma, { direct });
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  /** The rows Postgres read to answer the one statement `list` sends. */
  async function rowsReadBy(list: () => Promise<unknown>): Promise<number> {
    statements.length = 0;
    await list();
    const [statement] = statements.filter(({ sql }) => sql.includes('SELECT'));
    const [{ 'QUERY PLAN': plan }] = await database.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`,
      statement.params,
    );
    return rowsRead(plan[0].Plan);
  }

  /** A position deep in the org's history: 4000 entries newer than it, 1000 older. */
  async function deepPosition(table: string): Promise<AuditPosition> {
    const [row] = await database.query<{ at: Date; id: string }>(
      `SELECT at, id::text FROM ${table} WHERE org_id = $1 ORDER BY at DESC, id DESC OFFSET $2 LIMIT 1`,
      [ORG, ROWS - 1000],
    );
    return { at: row.at, id: row.id };
  }

  it('reads a page of the login audit from its cursor on, not every newer entry of the org', async () => {
    const logins = new LoginAuditRepository(prisma as unknown as PrismaService);
    const position = await deepPosition('login_audit');
    expect(await rowsReadBy(() => logins.listForOrg(ORG, {}, position, 21))).toBeLessThan(ROWS / 2);
    expect(await rowsReadBy(() => logins.listForOrg(ORG, { subject: USER }, position, 21))).toBeLessThan(ROWS / 2);
  });

  it('reads a page of the admin audit from its cursor on, not every newer entry of the org', async () => {
    const admin = new AdminAuditRepository(prisma as unknown as PrismaService);
    const position = await deepPosition('admin_audit');
    expect(await rowsReadBy(() => admin.listForOrg(ORG, position, 21))).toBeLessThan(ROWS / 2);
  });

  it('still pages across entries of the same instant by id', async () => {
    const logins = new LoginAuditRepository(prisma as unknown as PrismaService);
    const at = new Date('2026-01-01T00:00:00.000Z');
    for (let entry = 0; entry < 3; entry += 1) {
      await logins.add({
        at,
        grantType: 'password',
        username: 'same@example.test',
        subject: null,
        orgId: ORG,
        clientId: 'web',
        clientIp: '203.0.113.6',
        deviceId: '',
        userAgent: '',
        outcome: 'failure',
        reason: 'invalid_grant',
      });
    }
    const [stored] = await database.query<{ id: string }>(
      `SELECT id::text FROM login_audit WHERE at = $1 ORDER BY id DESC LIMIT 1`,
      [at],
    );
    const page = await logins.listForOrg(ORG, {}, { at, id: stored.id }, 5);
    expect(page.slice(0, 2).map((row) => row.at.toISOString())).toEqual([at.toISOString(), at.toISOString()]);
    expect(page.slice(0, 2).every((row) => row.id < stored.id)).toBe(true);
  });
});
