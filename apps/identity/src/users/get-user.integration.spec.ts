import { DomainError } from '@acct/problem';

import { Transactions } from '../prisma/transactions';
import { callerOf, IdentityHarness, SeededOrg } from '../testing/identity-harness';
import { CreateUserService } from './create-user.service';
import { GetUserService } from './get-user.service';
import { UsersRepository } from './users.repository';

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

describe('GetUser against Postgres', () => {
  let identity: IdentityHarness;
  let service: GetUserService;
  let acme: SeededOrg;
  let globex: SeededOrg;

  beforeAll(async () => {
    identity = await IdentityHarness.start();
    service = identity.get(GetUserService);
    acme = await identity.seedOrg('acme');
    globex = await identity.seedOrg('globex');
  });

  afterAll(async () => {
    await identity?.close();
  });

  it('answers a user of the caller’s org', async () => {
    const { user } = await identity.get(CreateUserService).create(acme.admin, {
      email: 'Grace@Example.com',
      displayName: 'Grace',
      roles: ['viewer'],
      requestFingerprint: '',
    });
    expect(await service.get(acme.admin, user.id)).toEqual(user);
  });

  it('reads a user alike straight on the pool (the read path) and inside a transaction', async () => {
    const users = identity.get(UsersRepository);
    const direct = await users.findInOrg(acme.orgId, acme.adminUserId);
    expect(direct).not.toBeNull();
    expect(await identity.get(Transactions).run((db) => users.findInOrg(acme.orgId, acme.adminUserId, db))).toEqual(
      direct,
    );
    expect(await users.findInOrg(globex.orgId, acme.adminUserId)).toBeNull();
  });

  it('answers the calling user for "me"', async () => {
    expect(await service.get(acme.admin, 'me')).toMatchObject({
      id: acme.adminUserId,
      orgId: acme.orgId,
      email: 'admin@acme.example.com',
      status: 'active',
      roles: ['admin'],
    });
  });

  it('answers not_found for "me" when the caller is a client', async () => {
    const client = callerOf('client', 'provisioner', acme.orgId, ['users:read'], ['admin']);
    expect((await failure(service.get(client, 'me'))).code).toBe('not_found');
  });

  it('answers not_found for a user of another org, exactly as for one that does not exist', async () => {
    const otherOrg = await failure(service.get(acme.admin, globex.adminUserId));
    const nobody = await failure(service.get(acme.admin, crypto.randomUUID()));
    expect(otherOrg.code).toBe('not_found');
    expect(otherOrg.toPayload()).toEqual(nobody.toPayload());
  });

  it.each(['not-a-uuid', '', "1' OR '1'='1", 'ME'])('answers not_found for the malformed id %p', async (id) => {
    expect((await failure(service.get(acme.admin, id))).code).toBe('not_found');
  });

  it('refuses a caller with neither users:read nor users:write with insufficient_scope naming users:read', async () => {
    const reader = { ...acme.admin, scopes: new Set(['system:read']) };
    const refusal = await failure(service.get(reader, 'me'));
    expect(refusal.code).toBe('insufficient_scope');
    expect(refusal.options.headers?.['WWW-Authenticate']).toContain('scope="users:read"');
  });

  it('answers a caller holding users:write alone: auth reads the user an admin unlocks with its token', async () => {
    // `DELETE /v2/users/{id}/lockout` takes users:write (docs/reference.md, the OpenAPI document); auth
    // asks GetUser with the admin's token whether it is still an admin and for the user's login names.
    const writer = { ...acme.admin, scopes: new Set(['users:write']) };
    expect(await service.get(writer, 'me')).toMatchObject({ id: acme.adminUserId, roles: ['admin'] });
    expect((await service.get(writer, acme.adminUserId)).id).toBe(acme.adminUserId);
    expect((await failure(service.get(writer, globex.adminUserId))).code).toBe('not_found');
  });
});
