import { DomainError } from '@acct/problem';

import { PrismaService } from '../prisma/prisma.service';
import { Transactions } from '../prisma/transactions';
import { callerOf, IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserCommand, CreateUserService } from '../users/create-user.service';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService, OutcomeCodec } from './idempotency.service';
import { IdempotencyPurger } from './idempotency-purger';
import { CLAIM_LEASE_MS, IDEMPOTENCY_WINDOW_MS } from './idempotency-rules';

jest.setTimeout(60_000);

const failure = async (promise: Promise<unknown>): Promise<DomainError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
};

const plain: OutcomeCodec<string> = { successStatus: 201, encode: (value) => value, decode: (body) => String(body) };

describe('Idempotency-Key on CreateUser against Postgres', () => {
  let identity: IdentityHarness;
  let users: CreateUserService;
  let prisma: PrismaService;
  let acme: SeededOrg;
  let globex: SeededOrg;
  let counter = 0;

  /** A request with its own key and e-mail, so tests never meet. */
  const fresh = (overrides: Partial<CreateUserCommand> = {}): CreateUserCommand => {
    counter += 1;
    return {
      email: `idem-${counter}@example.com`,
      displayName: `Idem ${counter}`,
      password: 'a fine password',
      roles: [],
      idempotencyKey: `key-${counter}`,
      requestFingerprint: `gateway-fingerprint-${counter}`,
      ...overrides,
    };
  };
  const usersWith = (email: string) => prisma.user.count({ where: { emailNormalized: email.toLowerCase() } });

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    users = identity.get(CreateUserService);
    prisma = identity.get(PrismaService);
    acme = await identity.seedOrg('acme');
    globex = await identity.seedOrg('globex');
  });

  afterAll(async () => {
    await identity?.close();
  });

  it('replays the first answer, marked replayed, with the very same user', async () => {
    const request = fresh();
    const first = await users.create(acme.admin, request);
    const again = await users.create(acme.admin, request);
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ user: first.user, replayed: true });
    expect(await usersWith(request.email)).toBe(1);
  });

  it('creates exactly one user out of 20 concurrent requests with one key; every answer is that user or in_use', async () => {
    const request = fresh();
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => users.create(acme.admin, request)));
    const answered = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as DomainError] : []));
    expect(answered.filter((answer) => !answer.replayed)).toHaveLength(1);
    expect(new Set(answered.map((answer) => JSON.stringify(answer.user))).size).toBe(1);
    expect(refused.map((error) => error.code)).toEqual(refused.map(() => 'idempotency_key_in_use'));
    expect(answered.length + refused.length).toBe(20);
    expect(await usersWith(request.email)).toBe(1);
    // Once it is done, every retry gets the user.
    expect((await users.create(acme.admin, request)).user).toEqual(answered[0]?.user);
  });

  it('refuses the same key with a different request with idempotency_key_reused', async () => {
    const request = fresh();
    await users.create(acme.admin, request);
    const error = await failure(users.create(acme.admin, { ...request, displayName: 'Someone else' }));
    expect(error.code).toBe('idempotency_key_reused');
    expect(error.status).toBe(422);
    const viaGateway = await failure(users.create(acme.admin, { ...request, requestFingerprint: 'another body' }));
    expect(viaGateway.code).toBe('idempotency_key_reused');
  });

  it('keeps keys of different callers apart: another org, or another subject in the same org', async () => {
    const request = fresh();
    const first = await users.create(acme.admin, request);
    // Same key, same body from another org's admin: processed on its own (the e-mail is taken by then).
    expect((await failure(users.create(globex.admin, request))).code).toBe('email_taken');
    // Same key in the same org, from a client: its own key too; a new e-mail creates a second user.
    const client = callerOf('client', 'provisioner', acme.orgId, ['users:write'], ['admin']);
    const other = await users.create(client, { ...request, email: `other-${request.email}` });
    expect(other.replayed).toBe(false);
    expect(other.user.id).not.toBe(first.user.id);
  });

  it('stores a 4xx outcome and replays it with Idempotent-Replayed: true', async () => {
    const taken = fresh();
    await users.create(acme.admin, taken);
    const request = fresh({ email: taken.email });
    const first = await failure(users.create(acme.admin, request));
    expect(first.code).toBe('email_taken');
    expect(first.options.headers?.['Idempotent-Replayed']).toBeUndefined();
    const replay = await failure(users.create(acme.admin, request));
    expect(replay).toMatchObject({ code: 'email_taken', status: 409, detail: first.detail });
    expect(replay.options.headers?.['Idempotent-Replayed']).toBe('true');
  });

  it('stores a validation failure too: the same body with the same key fails the same way, replayed', async () => {
    const request = fresh({ displayName: '' });
    expect((await failure(users.create(acme.admin, request))).code).toBe('validation_failed');
    const replay = await failure(users.create(acme.admin, request));
    expect(replay.code).toBe('validation_failed');
    expect(replay.options.errors).toEqual([{ field: 'display_name', message: 'must not be empty' }]);
    expect(replay.options.headers?.['Idempotent-Replayed']).toBe('true');
  });

  it('refuses a malformed key before claiming anything', async () => {
    for (const idempotencyKey of ['', 'x'.repeat(256), 'tab\there', 'ключ']) {
      const error = await failure(users.create(acme.admin, fresh({ idempotencyKey })));
      expect(error.code).toBe('validation_failed');
      expect(error.options.errors?.[0]?.field).toBe('Idempotency-Key');
    }
    expect(await prisma.idempotencyKey.count({ where: { key: '' } })).toBe(0);
  });

  it('forgets a key after 24 hours: the same key then starts afresh', async () => {
    const request = fresh();
    await users.create(acme.admin, request);
    identity.clock.advance(IDEMPOTENCY_WINDOW_MS + 1);
    try {
      // A different body would be idempotency_key_reused within the window; after it, it is a new request.
      const later = await users.create(acme.admin, { ...request, email: `later-${request.email}` });
      expect(later.replayed).toBe(false);
      expect(later.user.email).toBe(`later-${request.email}`);
    } finally {
      identity.clock.advance(-(IDEMPOTENCY_WINDOW_MS + 1));
    }
  });

  it('purges expired keys and keeps the others', async () => {
    const old = fresh();
    await users.create(acme.admin, old);
    identity.clock.advance(IDEMPOTENCY_WINDOW_MS - 1000);
    const recent = fresh();
    await users.create(acme.admin, recent);
    identity.clock.advance(2000);
    try {
      await identity.get(IdempotencyPurger).purge();
      const keys = (await prisma.idempotencyKey.findMany({ select: { key: true } })).map((row) => row.key);
      expect(keys).not.toContain(old.idempotencyKey);
      expect(keys).toContain(recent.idempotencyKey);
    } finally {
      identity.clock.advance(-(IDEMPOTENCY_WINDOW_MS + 1000));
    }
  });

  it('purges a backlog of expired keys in batches of at most 1,000 (no statement holds them all)', async () => {
    const expired = identity.clock.date();
    await prisma.idempotencyKey.createMany({
      data: Array.from({ length: 2500 }, (_, index) => ({
        orgId: acme.orgId,
        subject: 'user:backlog',
        key: `backlog-${index}`,
        fingerprint: 'f',
        state: 'completed' as const,
        claimToken: '00000000-0000-4000-8000-000000000000',
        responseStatus: 201,
        responseBody: {},
        lockedUntil: expired,
        expiresAt: expired,
      })),
    });
    const repository = identity.get(IdempotencyRepository);
    const purges = jest.spyOn(repository, 'purgeExpired');
    try {
      expect(await identity.get(IdempotencyPurger).purge()).toBeGreaterThanOrEqual(2500);
      const counts = await Promise.all(purges.mock.results.map((result) => result.value as Promise<number>));
      expect(Math.max(...counts)).toBeLessThanOrEqual(1000);
      expect(await prisma.idempotencyKey.count({ where: { subject: 'user:backlog' } })).toBe(0);
    } finally {
      purges.mockRestore();
    }
  });

  describe('the claim itself', () => {
    let idempotency: IdempotencyService;
    let keys: IdempotencyRepository;
    const call = (key: string, fingerprint = 'f') => ({
      scope: { orgId: acme.orgId, subject: 'user:x' },
      key,
      fingerprint,
    });

    beforeAll(() => {
      idempotency = identity.get(IdempotencyService);
      keys = identity.get(IdempotencyRepository);
    });

    it('answers idempotency_key_in_use while the first request is still running', async () => {
      let finish!: (value: string) => void;
      const first = idempotency.run(call('slow'), plain, () => new Promise<string>((resolve) => (finish = resolve)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const refused = await failure(idempotency.run(call('slow'), plain, () => Promise.resolve('second')));
      // With when to ask again (Retry-After), for the first request's stored answer.
      expect({ code: refused.code, retryAfter: refused.options.retryAfter }).toEqual({
        code: 'idempotency_key_in_use',
        retryAfter: 1,
      });
      finish('first');
      expect(await first).toEqual({ value: 'first', replayed: false });
      expect(await idempotency.run(call('slow'), plain, () => Promise.resolve('second'))).toEqual({
        value: 'first',
        replayed: true,
      });
    });

    it('does not store an unexpected failure: the key is released and a retry runs the work again', async () => {
      await expect(idempotency.run(call('boom'), plain, () => Promise.reject(new Error('db down')))).rejects.toThrow(
        'db down',
      );
      expect(await keys.find(call('boom'))).toBeNull();
      expect(await idempotency.run(call('boom'), plain, () => Promise.resolve('ok'))).toEqual({
        value: 'ok',
        replayed: false,
      });
    });

    it('does not store a 429 or a 5xx domain error', async () => {
      for (const error of [
        new DomainError('rate_limited', 'slow down', { retryAfter: 1 }),
        new DomainError('service_unavailable', 'later'),
      ]) {
        await expect(idempotency.run(call(`no-store-${error.code}`), plain, () => Promise.reject(error))).rejects.toBe(
          error,
        );
        expect(await keys.find(call(`no-store-${error.code}`))).toBeNull();
      }
    });

    it('takes over a claim abandoned by a crashed worker once its lease has run out', async () => {
      const now = identity.clock.date();
      await keys.insertClaim(call('crashed'), {
        fingerprint: 'f',
        claimToken: crypto.randomUUID(),
        now,
        lockedUntil: new Date(now.getTime() + CLAIM_LEASE_MS),
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS),
      });
      expect((await failure(idempotency.run(call('crashed'), plain, () => Promise.resolve('retry')))).code).toBe(
        'idempotency_key_in_use',
      );
      identity.clock.advance(CLAIM_LEASE_MS + 1);
      try {
        expect(await idempotency.run(call('crashed'), plain, () => Promise.resolve('retry'))).toEqual({
          value: 'retry',
          replayed: false,
        });
      } finally {
        identity.clock.advance(-(CLAIM_LEASE_MS + 1));
      }
    });

    it('rolls the work back when its claim was taken over meanwhile', async () => {
      const orgId = crypto.randomUUID();
      const error = await failure(
        idempotency.run(call('lost'), plain, (claim) =>
          identity.get(Transactions).run(async (db) => {
            await db.org.create({ data: { id: orgId, name: 'written by the loser' } });
            // Meanwhile the lease ran out and another request took the key over.
            await prisma.idempotencyKey.updateMany({
              where: { key: 'lost' },
              data: { claimToken: crypto.randomUUID() },
            });
            await claim.complete('mine', db);
            return 'mine';
          }),
        ),
      );
      expect(error.code).toBe('idempotency_key_in_use');
      expect(await prisma.org.findUnique({ where: { id: orgId } })).toBeNull();
    });
  });
});
