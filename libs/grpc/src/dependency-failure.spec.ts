import net from 'node:net';

import { DomainError } from '@acct/problem';
import { status } from '@grpc/grpc-js';
import { ArgumentsHost } from '@nestjs/common';
import pg from 'pg';
import { firstValueFrom } from 'rxjs';

import { isDependencyUnavailable } from './dependency-failure';
import { PROBLEM_METADATA_KEY } from './error-mapping';
import { DomainErrorRpcFilter } from './rpc-exception.filter';

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('dependency failures', () => {
  it('recognises a database that cannot be reached, as pg reports it', async () => {
    const client = new pg.Client({ host: '127.0.0.1', port: await closedPort(), user: 'nobody' });
    const failure = await client.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isDependencyUnavailable(failure)).toBe(true);
  });

  it('recognises a database whose host name does not resolve, as a pooled statement reports it', async () => {
    // What `docker compose stop postgres` leaves (Docker's DNS forgets the name), or a StatefulSet pod
    // being rescheduled: the services' single statements (DirectStatements: a user read, a creation's
    // Idempotency-Key claim, a refresh rotation, a login's lockout) get pg's own error, which Prisma's
    // adapter turns into P1001 only for Prisma's queries.
    const pool = new pg.Pool({ host: 'postgres.invalid', user: 'nobody', connectionTimeoutMillis: 2000 });
    const failure = await pool.query('SELECT 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    await pool.end();
    // ENOTFOUND (EAI_AGAIN on a host whose resolver does not answer at all).
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain((failure as { code?: string }).code);
    expect(isDependencyUnavailable(failure)).toBe(true);
    // A resolver that did not answer (a DNS outage) is as temporary.
    const resolverAway = Object.assign(new Error('getaddrinfo EAI_AGAIN postgres'), {
      code: 'EAI_AGAIN',
      syscall: 'getaddrinfo',
      errno: -3001,
    });
    expect(isDependencyUnavailable(resolverAway)).toBe(true);
    const noRoute = Object.assign(new Error('connect ENETUNREACH 10.0.0.5:5432'), { code: 'ENETUNREACH' });
    expect(isDependencyUnavailable(noRoute)).toBe(true);
  });

  it('recognises a statement the database left unanswered past the query timeout', () => {
    expect(isDependencyUnavailable(new Error('Query read timeout'))).toBe(true);
  });

  it('recognises Prisma connection codes, also when wrapped', () => {
    expect(isDependencyUnavailable(Object.assign(new Error('x'), { code: 'P1001' }))).toBe(true);
    expect(isDependencyUnavailable(new Error('query failed', { cause: { code: 'P2024' } }))).toBe(true);
  });

  it('recognises a connection Postgres terminated (a restart, a failover), also inside a Prisma error', () => {
    const terminated = {
      code: '57P01',
      severity: 'FATAL',
      message: 'terminating connection due to administrator command',
    };
    expect(isDependencyUnavailable(Object.assign(new Error(terminated.message), terminated))).toBe(true);
    const prisma = Object.assign(new Error('Raw query failed. Code: `57P01`.'), {
      code: 'P2010',
      meta: {
        driverAdapterError: Object.assign(new Error(terminated.message), {
          cause: { kind: 'postgres', ...terminated },
        }),
      },
    });
    expect(isDependencyUnavailable(prisma)).toBe(true);
    expect(isDependencyUnavailable(Object.assign(new Error('starting up'), { code: '57P03' }))).toBe(true);
  });

  it('recognises a database that refuses more connections (max_connections, a role or database limit)', () => {
    // As Postgres, pg and Prisma's driver adapter report it (a role with CONNECTION LIMIT 0).
    const refused = { code: '53300', severity: 'FATAL', message: 'too many connections for role "app"' };
    expect(isDependencyUnavailable(Object.assign(new Error(refused.message), refused))).toBe(true);
    const driverAdapterError = Object.assign(new Error('TooManyConnections'), {
      cause: { originalCode: '53300', originalMessage: refused.message, kind: 'TooManyConnections' },
    });
    const model = Object.assign(new Error(`Too many database connections opened: ${refused.message}`), {
      code: 'P2037',
      meta: { modelName: 'Client', driverAdapterError },
    });
    expect(isDependencyUnavailable(model)).toBe(true);
    const raw = Object.assign(new Error('Raw query failed.'), { code: 'P2010', meta: { driverAdapterError } });
    expect(isDependencyUnavailable(raw)).toBe(true);
  });

  it('recognises a statement the database cancelled at its statement or lock timeout', () => {
    for (const [code, message] of [
      ['57014', 'canceling statement due to statement timeout'],
      ['55P03', 'canceling statement due to lock timeout'],
    ]) {
      expect(isDependencyUnavailable(Object.assign(new Error(message), { code, severity: 'ERROR' }))).toBe(true);
      const driverAdapterError = Object.assign(new Error(message), { cause: { kind: 'postgres', code, message } });
      const raw = Object.assign(new Error(`Raw query failed. Code: \`${code}\`.`), {
        code: 'P2010',
        meta: { driverAdapterError },
      });
      expect(isDependencyUnavailable(raw)).toBe(true);
    }
  });

  it('recognises a database that takes no writes now (a standby a failover left the service on)', async () => {
    // A server in recovery refuses every write as a read-only transaction does (SQLSTATE 25006): the
    // old primary back as a standby while a pooler or DNS still names it, until it is pointed again.
    const url = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const client = new pg.Client({ connectionString: url, options: '-c default_transaction_read_only=on' });
    await client.connect();
    try {
      const refused = await client.query('CREATE TABLE never_created (id int)').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((refused as { code?: string }).code).toBe('25006');
      expect(isDependencyUnavailable(refused)).toBe(true);
      const driverAdapterError = Object.assign(new Error('read-only'), {
        cause: { kind: 'postgres', code: '25006', message: 'cannot execute INSERT in a read-only transaction' },
      });
      const raw = Object.assign(new Error('Raw query failed. Code: `25006`.'), {
        code: 'P2010',
        meta: { driverAdapterError },
      });
      expect(isDependencyUnavailable(raw)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('recognises a transaction Postgres aborted for a deadlock or a serialization failure (retrying succeeds)', async () => {
    // A real deadlock: two sessions each hold one advisory lock and ask for the other's.
    const url = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const [first, second] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    await Promise.all([first.connect(), second.connect()]);
    try {
      const [a, b] = [7_340_001, 7_340_002];
      await Promise.all([first.query('BEGIN'), second.query('BEGIN')]);
      await first.query('SELECT pg_advisory_xact_lock($1)', [a]);
      await second.query('SELECT pg_advisory_xact_lock($1)', [b]);
      // The victim's transaction keeps its lock until it is rolled back, which lets the other one go on.
      const victim = (client: pg.Client, lock: number) =>
        client.query('SELECT pg_advisory_xact_lock($1)', [lock]).then(
          () => undefined,
          async (error: { code?: string }) => {
            await client.query('ROLLBACK');
            return error;
          },
        );
      const outcomes = await Promise.all([victim(first, b), victim(second, a)]);
      await Promise.all([first.query('ROLLBACK'), second.query('ROLLBACK')]);
      const deadlock = outcomes.find((outcome) => outcome !== undefined);
      expect(deadlock?.code).toBe('40P01');
      expect(isDependencyUnavailable(deadlock)).toBe(true);
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
    // As Prisma reports 40P01 and 40001 through its driver adapter: P2034 for a model query, P2010 raw.
    for (const originalCode of ['40P01', '40001']) {
      const driverAdapterError = Object.assign(new Error('TransactionWriteConflict'), {
        cause: { originalCode, originalMessage: 'deadlock detected', kind: 'TransactionWriteConflict' },
      });
      const model = Object.assign(
        new Error('Transaction failed due to a write conflict or a deadlock. Please retry your transaction'),
        { code: 'P2034', meta: { modelName: 'User', driverAdapterError } },
      );
      expect(isDependencyUnavailable(model)).toBe(true);
      const raw = Object.assign(new Error('Raw query failed.'), { code: 'P2010', meta: { driverAdapterError } });
      expect(isDependencyUnavailable(raw)).toBe(true);
    }
    expect(isDependencyUnavailable(Object.assign(new Error('write conflict'), { code: 'P2034' }))).toBe(true);
  });

  it('leaves bugs and rule violations alone', () => {
    expect(isDependencyUnavailable(new TypeError('undefined is not a function'))).toBe(false);
    expect(isDependencyUnavailable(Object.assign(new Error('unique'), { code: 'P2002' }))).toBe(false);
    expect(isDependencyUnavailable(undefined)).toBe(false);
    const uniqueViolation = { meta: { driverAdapterError: { cause: { kind: 'postgres', code: '23505' } } } };
    expect(isDependencyUnavailable(Object.assign(new Error('unique'), { code: 'P2010', ...uniqueViolation }))).toBe(
      false,
    );
  });

  it('makes the gRPC edge answer UNAVAILABLE with service_unavailable rather than INTERNAL', async () => {
    const filter = new DomainErrorRpcFilter();
    const sent = await firstValueFrom(
      filter.catch(Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001' }), {
        getType: () => 'rpc',
      } as unknown as ArgumentsHost),
    ).catch((error: { code: number; metadata: { get(key: string): unknown[] } }) => error);
    expect(sent.code).toBe(status.UNAVAILABLE);
    const [payload] = sent.metadata.get(PROBLEM_METADATA_KEY) as Buffer[];
    expect(DomainError.fromPayload(JSON.parse(payload.toString('utf8')))?.code).toBe('service_unavailable');
  });
});
