import { AccessTokenVerifier } from '@acct/access-token';
import { FakeClock } from '@acct/clock';
import { compactVerify, importJWK } from 'jose';

import { AuthConfig, loadAuthConfig } from '../config';
import { PrismaService } from '../prisma/prisma.service';
import { quietNestLogs } from '../test-support/quiet-logs';
import { createTestDatabase, TestDatabase } from '../test-support/test-database';
import { SigningKeyRepository } from './signing-key.repository';
import { RETIRED_KEY_MARGIN_MS, SigningKeyService } from './signing-key.service';

describe('SigningKeyService (real Postgres)', () => {
  let database: TestDatabase;
  let config: AuthConfig;
  const clients: PrismaService[] = [];

  /** One auth instance: its own connection pool and key cache. */
  const instance = (clock = new FakeClock()) => {
    const prisma = new PrismaService(config);
    clients.push(prisma);
    return new SigningKeyService(new SigningKeyRepository(prisma), clock, config);
  };
  const signWith = async (keys: SigningKeyService) => {
    const signer = await keys.currentSigner();
    return { kid: signer.kid, token: signer.sign({ sub: 's' }) };
  };
  const verifies = async (keys: SigningKeyService, token: string) => {
    const kid = (JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()) as { kid: string }).kid;
    const jwk = (await keys.publishedKeys()).find((key) => key.kid === kid);
    if (!jwk) return false;
    await compactVerify(token, await importJWK(jwk, 'ES256'));
    return true;
  };

  beforeAll(async () => {
    quietNestLogs();
    database = await createTestDatabase();
    config = loadAuthConfig({ AUTH_DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((prisma) => prisma.$disconnect()));
    await database.query('DELETE FROM signing_keys');
  });

  afterAll(async () => {
    await database.drop();
  });

  it('creates exactly one active key when eight instances start at the same moment', async () => {
    const instances = Array.from({ length: 8 }, () => instance());
    await Promise.all(instances.map((keys) => keys.reload()));

    const rows = await database.query<{ kid: string; retired_at: Date | null }>(
      'SELECT kid, retired_at FROM signing_keys',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].retired_at).toBeNull();
    const kids = await Promise.all(instances.map(async (keys) => (await keys.currentSigner()).kid));
    expect(new Set(kids)).toEqual(new Set([rows[0].kid]));
  });

  it('keeps the private key encrypted at rest and publishes only the public parts', async () => {
    const keys = instance();
    await keys.reload();
    const [row] = await database.query<{ private_key_pem: string; public_jwk: object }>(
      'SELECT private_key_pem, public_jwk FROM signing_keys',
    );
    expect(row.private_key_pem).toMatch(/^aes256gcm:/);
    expect(row.private_key_pem).not.toContain('PRIVATE KEY');
    const published = await keys.publishedKeys();
    expect(published).toHaveLength(1);
    expect(Object.keys(published[0]).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(published[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  });

  it('refuses to load keys encrypted under another AUTH_KEY_ENCRYPTION_KEY', async () => {
    await instance().reload();
    const otherConfig = loadAuthConfig({
      AUTH_DATABASE_URL: database.url,
      AUTH_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    const prisma = new PrismaService(otherConfig);
    clients.push(prisma);
    const stranger = new SigningKeyService(new SigningKeyRepository(prisma), new FakeClock(), otherConfig);
    await expect(stranger.reload()).rejects.toThrow('cannot be decrypted');
    await expect(stranger.currentSigner()).rejects.toMatchObject({ code: 'service_unavailable' });
  });

  it('rotates: the new key signs, tokens of the old one keep verifying until they have all expired', async () => {
    const clock = new FakeClock();
    const keys = instance(clock);
    await keys.reload();
    const before = await signWith(keys);

    clock.advance(1000);
    const { kid: newKid } = await keys.rotate();
    const after = await signWith(keys);
    expect(after.kid).toBe(newKid);
    expect(newKid).not.toBe(before.kid);
    expect((await keys.publishedKeys()).map((key) => key.kid).sort()).toEqual([before.kid, newKid].sort());
    expect(await verifies(keys, before.token)).toBe(true);
    expect(await verifies(keys, after.token)).toBe(true);

    // Still published at the last moment a token of the old key can be valid…
    clock.advance(config.ACCESS_TOKEN_TTL_SECONDS * 1000 + RETIRED_KEY_MARGIN_MS - 1000);
    await keys.reload();
    expect(await verifies(keys, before.token)).toBe(true);
    // …and gone after it.
    clock.advance(2000);
    await keys.reload();
    expect((await keys.publishedKeys()).map((key) => key.kid)).toEqual([newKid]);
    expect(await verifies(keys, before.token)).toBe(false);
    expect(await verifies(keys, after.token)).toBe(true);

    const rows = await database.query<{ kid: string; retired_at: Date | null }>(
      'SELECT kid, retired_at FROM signing_keys ORDER BY created_at',
    );
    expect(rows.map((row) => [row.kid, row.retired_at !== null])).toEqual([
      [before.kid, true],
      [newKid, false],
    ]);
  });

  it('rotates withdrawing the old key (it may have leaked): no token signed with it verifies from then on', async () => {
    const clock = new FakeClock();
    const keys = instance(clock);
    await keys.reload();
    const before = await signWith(keys);

    clock.advance(1000);
    const { kid: newKid, withdrawn } = await keys.rotate({ withdrawPrevious: true });
    const after = await signWith(keys);
    expect(after.kid).toBe(newKid);
    // The kids to announce, so that every verifier refuses them at once.
    expect(withdrawn).toEqual([before.kid]);
    // Whoever holds the old private key could sign any claims with it: it is not published a moment longer.
    expect((await keys.publishedKeys()).map((key) => key.kid)).toEqual([newKid]);
    expect(await verifies(keys, before.token)).toBe(false);
    expect(await verifies(keys, after.token)).toBe(true);
    // Nor is its (encrypted) private key kept.
    const rows = await database.query<{ kid: string }>('SELECT kid FROM signing_keys');
    expect(rows.map((row) => row.kid)).toEqual([newKid]);
  });

  it('has a running instance that cannot decrypt the key a withdrawal put in place stop signing with and publishing the withdrawn one', async () => {
    // The operator's shell ran `rotate-signing-key --withdraw-old` with another AUTH_KEY_ENCRYPTION_KEY
    // (the Secret's new one, after a leak) than the instances that still run: the leaked key must not
    // stay in their key set, nor sign their tokens, while they cannot use the new one.
    const running = instance();
    await running.reload();
    const leaked = await signWith(running);
    const operatorConfig = loadAuthConfig({
      AUTH_DATABASE_URL: database.url,
      AUTH_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    });
    const prisma = new PrismaService(operatorConfig);
    clients.push(prisma);
    const operator = new SigningKeyService(new SigningKeyRepository(prisma), new FakeClock(), operatorConfig);
    const { kid: newKid } = await operator.rotate({ withdrawPrevious: true });

    await expect(running.reload()).rejects.toThrow('cannot be decrypted');
    expect((await running.publishedKeys()).map((key) => key.kid)).toEqual([newKid]);
    expect(await verifies(running, leaked.token)).toBe(false);
    // Like an instance started now with its key: unready, and no token is issued (503) until it is.
    expect(running.ready).toBe(false);
    await expect(running.currentSigner()).rejects.toMatchObject({ code: 'service_unavailable' });
  });

  it('refuses a plain rotation under another AUTH_KEY_ENCRYPTION_KEY than the active key was made with, changing nothing', async () => {
    // Its new key would be one the running instances cannot sign with (a typo in the operator's env).
    const running = instance();
    await running.reload();
    const { kid } = await signWith(running);
    const otherConfig = loadAuthConfig({
      AUTH_DATABASE_URL: database.url,
      AUTH_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    });
    const prisma = new PrismaService(otherConfig);
    clients.push(prisma);
    const operator = new SigningKeyService(new SigningKeyRepository(prisma), new FakeClock(), otherConfig);
    await expect(operator.rotate()).rejects.toThrow('cannot be decrypted with AUTH_KEY_ENCRYPTION_KEY');

    const rows = await database.query<{ kid: string; retired_at: Date | null }>(
      'SELECT kid, retired_at FROM signing_keys',
    );
    expect(rows).toEqual([{ kid, retired_at: null }]);
  });

  it('has a verifier that accepted a token of a withdrawn key refuse it once it reads the key set again', async () => {
    const keys = instance();
    await keys.reload();
    const verifier = new AccessTokenVerifier({
      issuer: 'issuer',
      audience: 'audience',
      refetchIntervalMs: 0,
      keySetMaxAgeMs: 0,
      fetchKeys: async () => ({ keys: await keys.publishedKeys() }),
    });
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: 'issuer', aud: 'audience', sub: 's', iat: now, exp: now + 7200, jti: 'j' };
    const forged = (await keys.currentSigner()).sign({ ...claims, scope: 'users:write', org_id: 'o', client_id: 'c' });
    await expect(verifier.verify(forged)).resolves.toMatchObject({ subject: 's' });

    await keys.rotate({ withdrawPrevious: true });
    // The first call after the rotation starts the verifier's read of the key set (max age 0 here, a
    // minute in production); once it is in, the token is refused, its verified copy included.
    await verifier.verify(forged).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(verifier.verify(forged)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('lets other instances follow a rotation: they sign with the new key after their reload', async () => {
    const [first, second] = [instance(), instance()];
    await first.reload();
    await second.reload();
    const { kid: newKid } = await first.rotate();
    expect((await second.currentSigner()).kid).not.toBe(newKid);
    // Their JWKS shows the new key at once (it is reread when older than a second)…
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await second.publishedKeys()).map((key) => key.kid)).toContain(newKid);
    // …and their signer switches with the reload.
    await second.reload();
    expect((await second.currentSigner()).kid).toBe(newKid);
  });

  it('serves tokens an AccessTokenVerifier accepts across a rotation', async () => {
    const keys = instance();
    await keys.reload();
    const verifier = new AccessTokenVerifier({
      issuer: 'issuer',
      audience: 'audience',
      refetchIntervalMs: 0,
      fetchKeys: async () => ({ keys: await keys.publishedKeys() }),
    });
    const token = async () => {
      const now = Math.floor(Date.now() / 1000);
      return (await keys.currentSigner()).sign({
        iss: 'issuer',
        aud: 'audience',
        sub: 's',
        iat: now,
        exp: now + 7200,
        jti: 'j',
        scope: 'users:read',
        org_id: 'o',
        client_id: 'c',
      });
    };
    const old = await token();
    await expect(verifier.verify(old)).resolves.toMatchObject({ subject: 's' });
    await keys.rotate();
    await expect(verifier.verify(await token())).resolves.toMatchObject({ subject: 's' });
    await expect(verifier.verify(old)).resolves.toMatchObject({ subject: 's' });
  });
});
