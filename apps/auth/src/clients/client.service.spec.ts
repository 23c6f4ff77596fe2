import { Revocations } from '@acct/revocation';

import { loadAuthConfig } from '../config';
import { PrismaService } from '../prisma/prisma.service';
import { refusal } from '../test-support/refusal';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { ClientRepository } from './client.repository';
import { ClientService } from './client.service';
import { ClientCache } from './client-cache';
import { hashClientSecret } from './client-secret';

const ORG = 'c0ffee00-1234-4abc-8def-0123456789ab';

describe('ClientService (real Postgres)', () => {
  let database: TestDatabase;
  let prisma: PrismaService;
  let clients: ClientService;

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaService(loadAuthConfig({ AUTH_DATABASE_URL: database.url }));
    // Through the cache the process uses, so every check below also holds for remembered clients.
    const notices = { announce: () => undefined, onNotice: () => undefined } as unknown as Revocations;
    const cache = new ClientCache(notices, loadAuthConfig({ CLIENT_CACHE_TTL_MS: '60000' }));
    clients = new ClientService(new ClientRepository(prisma, cache));
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await database?.drop();
  });

  describe('the bootstrap client', () => {
    it('is a client_credentials admin client with the admin scopes, and only its secret hash is kept', async () => {
      const { clientId, clientSecret } = await clients.ensureBootstrap(ORG);
      expect(clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const [row] = await database.query('SELECT * FROM clients WHERE id = $1', [clientId]);
      expect(row).toMatchObject({
        org_id: ORG,
        grant_types: ['client_credentials'],
        roles: ['admin'],
        scopes: ['users:read', 'users:write', 'system:read', 'instances:write'],
        purpose: 'bootstrap',
        secret_hash: hashClientSecret(clientSecret!),
      });
      await expect(clients.authenticate(clientId, clientSecret!)).resolves.toMatchObject({ id: clientId, orgId: ORG });
    });

    it('is the same client every time, with no new secret unless asked', async () => {
      const first = await clients.ensureBootstrap('11111111-2222-4333-8444-555555555555');
      const again = await clients.ensureBootstrap('11111111-2222-4333-8444-555555555555');
      expect(again).toEqual({ clientId: first.clientId, clientSecret: null });
      await expect(clients.authenticate(first.clientId, first.clientSecret!)).resolves.toBeDefined();
    });

    it('gets a new secret with rotateSecret, and the old one stops working', async () => {
      const org = '22222222-2222-4333-8444-555555555555';
      const first = await clients.ensureBootstrap(org);
      const rotated = await clients.ensureBootstrap(org, true);
      expect(rotated.clientId).toBe(first.clientId);
      expect(rotated.clientSecret).not.toBe(first.clientSecret);
      await expect(clients.authenticate(first.clientId, first.clientSecret!)).resolves.toBeUndefined();
      await expect(clients.authenticate(first.clientId, rotated.clientSecret!)).resolves.toBeDefined();
    });

    it('is created once when many ask at the same moment; exactly one of them gets the secret', async () => {
      const org = '33333333-2222-4333-8444-555555555555';
      const answers = await Promise.all(Array.from({ length: 8 }, () => clients.ensureBootstrap(org)));
      expect(new Set(answers.map((answer) => answer.clientId)).size).toBe(1);
      expect(answers.filter((answer) => answer.clientSecret !== null)).toHaveLength(1);
      expect(await database.query('SELECT id FROM clients WHERE org_id = $1', [org])).toHaveLength(1);
    });

    it('refuses an org id that is not a UUID', async () => {
      expect((await refusal(clients.ensureBootstrap('acme'))).code).toBe('validation_failed');
    });
  });

  describe('create', () => {
    it('registers a client with the least role that covers its scopes', async () => {
      const reader = await clients.create({ orgId: ORG, name: ' reader ', scopes: ['users:read', 'system:read'] });
      const writer = await clients.create({ orgId: ORG, name: 'writer', scopes: ['users:write'] });
      const member = await clients.create({ orgId: ORG, name: 'deployer', scopes: ['instances:write'] });
      const rows = await database.query<{ id: string; name: string; roles: string[]; scopes: string[] }>(
        'SELECT id, name, roles, scopes FROM clients WHERE id = ANY($1)',
        [[reader.clientId, writer.clientId, member.clientId]],
      );
      const byId = new Map(rows.map((row) => [row.id, row]));
      expect(byId.get(reader.clientId)).toMatchObject({
        name: 'reader',
        roles: ['viewer'],
        scopes: ['system:read', 'users:read'],
      });
      expect(byId.get(writer.clientId)?.roles).toEqual(['admin']);
      expect(byId.get(member.clientId)?.roles).toEqual(['member']);
    });

    it('takes explicit roles, but not scopes beyond them', async () => {
      const { clientId } = await clients.create({ orgId: ORG, name: 'x', scopes: ['users:read'], roles: ['admin'] });
      expect(await clients.authenticate(clientId, 'wrong')).toBeUndefined();
      const error = await refusal(
        clients.create({ orgId: ORG, name: 'x', scopes: ['users:write'], roles: ['viewer'] }),
      );
      expect(error.code).toBe('validation_failed');
      expect(error.options.errors).toEqual([{ field: 'scopes', message: expect.stringContaining('users:write') }]);
    });

    it('lists every invalid field at once', async () => {
      const error = await refusal(
        clients.create({ orgId: 'nope', name: '', scopes: ['users:read', 'root:all'], roles: ['owner'] }),
      );
      expect(error.options.errors?.map((item) => item.field).sort()).toEqual(['name', 'org_id', 'roles', 'scopes']);
      expect((await refusal(clients.create({ orgId: ORG, name: 'n', scopes: [] }))).code).toBe('validation_failed');
    });
    it('refuses a name with a control character, as org and display names are, and counts characters, not UTF-16 units', async () => {
      // The name is shown on the login page ("continue to …") and in list-clients' lines: a newline or
      // an escape sequence in it forged a line of the operator's listing.
      for (const name of ['My\napp', 'app\u001b[2J', 'tab\tbed', 'c1\u0085']) {
        const error = await refusal(clients.create({ orgId: ORG, name, scopes: ['users:read'] }));
        expect({ name, errors: error.options.errors }).toEqual({
          name,
          errors: [{ field: 'name', message: expect.stringContaining('control characters') }],
        });
      }
      // 60 characters outside the BMP are 120 UTF-16 units: within 100 characters all the same.
      await expect(
        clients.create({ orgId: ORG, name: '🙂'.repeat(60), scopes: ['users:read'] }),
      ).resolves.toBeDefined();
      expect((await refusal(clients.create({ orgId: ORG, name: '🙂'.repeat(101), scopes: ['users:read'] }))).code).toBe(
        'validation_failed',
      );
    });
  });

  describe('public and confidential clients (contract §6)', () => {
    const spa = {
      orgId: ORG,
      name: 'spa',
      type: 'public',
      grantTypes: ['authorization_code', 'refresh_token'],
      redirectUris: ['https://spa.example/cb', 'http://127.0.0.1/cb'],
      scopes: ['users:read'],
    };

    it('registers a public client without a secret, with its grant types and redirect URIs', async () => {
      const { clientId, clientSecret } = await clients.create(spa);
      expect(clientSecret).toBeNull();
      const [row] = await database.query('SELECT * FROM clients WHERE id = $1', [clientId]);
      expect(row).toMatchObject({
        type: 'public',
        secret_hash: null,
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: ['https://spa.example/cb', 'http://127.0.0.1/cb'],
      });
      await expect(clients.authenticate(clientId, '')).resolves.toBeUndefined();
      await expect(clients.authenticateForGrant(clientId, '', 'authorization_code')).resolves.toMatchObject({
        id: clientId,
      });
      expect((await refusal(clients.authenticateForGrant(clientId, 'some secret', 'refresh_token'))).code).toBe(
        'invalid_client',
      );
      expect((await refusal(clients.authenticateForGrant(clientId, '', 'password'))).code).toBe('unauthorized_client');
    });

    it('authenticates a confidential client by its secret before its grant types', async () => {
      const { clientId, clientSecret } = await clients.create({ orgId: ORG, name: 'svc', scopes: ['users:read'] });
      expect((await refusal(clients.authenticateForGrant(clientId, '', 'password'))).code).toBe('invalid_client');
      expect((await refusal(clients.authenticateForGrant(clientId, clientSecret, 'password'))).code).toBe(
        'unauthorized_client',
      );
      await expect(clients.authenticateForGrant(clientId, clientSecret, 'client_credentials')).resolves.toBeDefined();
      expect((await refusal(clients.authenticateForGrant('unknown', '', 'password'))).code).toBe('invalid_client');
    });

    it.each([
      ['an unknown type', { type: 'native' }, 'type'],
      ['an unknown grant type', { grantTypes: ['implicit'], redirectUris: [] }, 'grant_types'],
      [
        'client_credentials for a public client',
        { grantTypes: ['client_credentials'], redirectUris: [] },
        'grant_types',
      ],
      ['refresh_token alone', { grantTypes: ['refresh_token'], redirectUris: [] }, 'grant_types'],
      ['authorization_code without a redirect URI', { redirectUris: [] }, 'redirect_uris'],
      ['a plain http redirect URI', { redirectUris: ['http://spa.example/cb'] }, 'redirect_uris'],
      ['a redirect URI with a fragment', { redirectUris: ['https://spa.example/cb#x'] }, 'redirect_uris'],
      ['redirect URIs without authorization_code', { grantTypes: ['password'] }, 'redirect_uris'],
    ])('refuses %s', async (_what, fields, field) => {
      const error = await refusal(clients.create({ ...spa, ...fields }));
      expect(error.code).toBe('validation_failed');
      expect(error.options.errors?.map((item) => item.field)).toEqual([field]);
    });

    it("lists an org's clients without secrets, rotates a secret and deletes a client", async () => {
      const org = '44444444-2222-4333-8444-555555555555';
      const server = await clients.create({ orgId: org, name: 'server', scopes: ['users:read'] });
      const app = await clients.create({ ...spa, orgId: org });
      const listed = await clients.list(org);
      expect(listed.map((client) => [client.id, client.type, client.name])).toEqual([
        [server.clientId, 'confidential', 'server'],
        [app.clientId, 'public', 'spa'],
      ]);
      expect(JSON.stringify(listed)).not.toMatch(/secret/i);
      // Remembered now: the rotation and the deletion below must drop it.
      await expect(clients.authenticate(server.clientId, server.clientSecret)).resolves.toBeDefined();

      const rotated = await clients.rotateSecret(server.clientId);
      expect(rotated.clientSecret).not.toBe(server.clientSecret);
      await expect(clients.authenticate(server.clientId, server.clientSecret)).resolves.toBeUndefined();
      await expect(clients.authenticate(server.clientId, rotated.clientSecret)).resolves.toBeDefined();
      expect((await refusal(clients.rotateSecret(app.clientId))).code).toBe('validation_failed');
      expect((await refusal(clients.rotateSecret('nobody'))).code).toBe('not_found');
      // An id no client can have (Postgres refuses U+0000 in text) is unknown, not an internal error.
      expect((await refusal(clients.rotateSecret('no\u0000body'))).code).toBe('not_found');
      expect((await refusal(clients.delete('no\u0000body'))).code).toBe('not_found');

      await clients.delete(server.clientId);
      await expect(clients.authenticate(server.clientId, rotated.clientSecret)).resolves.toBeUndefined();
      expect((await refusal(clients.rotateSecret(server.clientId))).code).toBe('not_found');
      expect((await refusal(clients.delete(server.clientId))).code).toBe('not_found');
      expect((await clients.list(org)).map((client) => client.id)).toEqual([app.clientId]);
    });

    it('answers not_found for a rotation of a client deleted while the rotation ran', async () => {
      const server = await clients.create({ orgId: ORG, name: 'deleted meanwhile', scopes: ['users:read'] });
      const notices = { announce: () => undefined, onNotice: () => undefined } as unknown as Revocations;
      const repository = new ClientRepository(prisma, new ClientCache(notices, loadAuthConfig()));
      // Another operator's delete-client lands between the rotation's read and its write.
      const read = repository.findFresh.bind(repository);
      repository.findFresh = async (clientId) => {
        const client = await read(clientId);
        await repository.delete(clientId);
        return client;
      };
      expect((await refusal(new ClientService(repository).rotateSecret(server.clientId))).code).toBe('not_found');
    });
  });
});
