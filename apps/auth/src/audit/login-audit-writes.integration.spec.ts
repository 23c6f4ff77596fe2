import { AuthConfig } from '../config';
import { PrismaService } from '../prisma/prisma.service';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { LoginAuditRecord, LoginAuditRepository } from './login-audit.repository';

const record = (index: number): LoginAuditRecord => ({
  at: new Date(),
  grantType: 'password',
  username: `user-${index}@example.test`,
  subject: null,
  orgId: null,
  clientId: 'web',
  clientIp: '203.0.113.7',
  deviceId: '',
  userAgent: 'group-commit-test',
  outcome: 'failure',
  reason: 'invalid_grant',
});

describe('login audit writes by group commit (real Postgres)', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('stores every row of concurrent requests, each stored by the time its request is answered', async () => {
    const prisma = new PrismaService({ AUTH_DATABASE_URL: database.url } as AuthConfig);
    const inserts = jest.spyOn(prisma.direct, 'query');
    const repository = new LoginAuditRepository(prisma);
    try {
      const stored = await Promise.all(
        Array.from({ length: 50 }, async (_, index) => {
          await repository.add(record(index));
          const rows = await database.query<{ n: string }>(
            'SELECT count(*) AS n FROM login_audit WHERE username = $1',
            [`user-${index}@example.test`],
          );
          return Number(rows[0].n);
        }),
      );
      expect(stored).toEqual(Array.from({ length: 50 }, () => 1));
      const all = await database.query<{ n: string }>('SELECT count(*) AS n FROM login_audit');
      expect(Number(all[0].n)).toBe(50);
      expect(inserts.mock.calls.length).toBeGreaterThan(0);
      expect(inserts.mock.calls.length).toBeLessThan(50);
    } finally {
      await prisma.$disconnect();
    }
  });

  it('fails every waiting request when its batch cannot be stored', async () => {
    const prisma = new PrismaService({ AUTH_DATABASE_URL: database.url } as AuthConfig);
    const repository = new LoginAuditRepository(prisma);
    await database.query('ALTER TABLE login_audit RENAME TO login_audit_away');
    try {
      const outcomes = await Promise.allSettled([1, 2, 3].map((index) => repository.add(record(index))));
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    } finally {
      await database.query('ALTER TABLE login_audit_away RENAME TO login_audit');
      await prisma.$disconnect();
    }
  });
});
