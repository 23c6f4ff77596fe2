import { createHmac } from 'node:crypto';

import { DomainError } from '@acct/problem';
import * as jose from 'jose';
import { exportJWK, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';

import { bearerToken } from './bearer';
import { followKeyWithdrawals, KEY_WITHDRAWAL_TOPIC, withdrawnKidsOf } from './key-withdrawals';
import { mayGrant, parseScope, scopesOfRoles } from './scopes';
import { AccessTokenVerifier } from './verifier';

// Counts full verifications (signature and claims) while keeping the real ones.
jest.mock('jose', () => {
  const actual = jest.requireActual<typeof import('jose')>('jose');
  return { ...actual, jwtVerify: jest.fn(actual.jwtVerify) };
});
const fullVerifications = () => (jose.jwtVerify as jest.Mock).mock.calls.length;

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'account-platform';

describe('AccessTokenVerifier', () => {
  let privateKey: KeyLike;
  let publicJwk: JWK;
  let fetches: number;
  let verifier: AccessTokenVerifier;

  const claims = { scope: 'users:read system:read', org_id: 'org-1', client_id: 'web', roles: ['member'] };
  const sign = (overrides: { kid?: string; typ?: string; aud?: string; iss?: string; exp?: number } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: overrides.kid ?? 'k1', typ: overrides.typ ?? 'at+jwt' })
      .setSubject('user-1')
      .setIssuer(overrides.iss ?? ISSUER)
      .setAudience(overrides.aud ?? AUDIENCE)
      .setIssuedAt()
      .setJti('jti-1')
      .setExpirationTime(overrides.exp ?? '2h')
      .sign(privateKey);

  const rejection = async (token: string) => {
    try {
      await verifier.verify(token);
    } catch (error) {
      return error as DomainError;
    }
    throw new Error('token was accepted');
  };

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  });

  /** A verifier whose n-th fetch of the key set (counted in `fetches`) answers `keysAt(n)`. */
  const countingVerifier = (refetchIntervalMs: number, keysAt: (fetch: number) => JWK[]) =>
    new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      refetchIntervalMs,
      fetchKeys: () => {
        fetches += 1;
        return Promise.resolve({ keys: keysAt(fetches) });
      },
    });

  beforeEach(() => {
    fetches = 0;
    verifier = countingVerifier(60_000, () => [publicJwk]);
  });

  it('accepts a well-formed token and exposes the caller', async () => {
    const caller = await verifier.verify(await sign());
    expect(caller).toMatchObject({
      subject: 'user-1',
      orgId: 'org-1',
      clientId: 'web',
      tokenId: 'jti-1',
      kind: 'user',
    });
    expect([...caller.scopes]).toEqual(['users:read', 'system:read']);
    expect(caller.roles).toEqual(['member']);
  });

  it('fetches the keys once and reuses them', async () => {
    await verifier.verify(await sign());
    await verifier.verify(await sign());
    expect(fetches).toBe(1);
  });

  it('refuses alg "none"', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: 'k1' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ ...claims, sub: 'u', iss: ISSUER, aud: AUDIENCE })).toString('base64url');
    const error = await rejection(`${header}.${body}.`);
    expect(error.code).toBe('unauthenticated');
    expect(error.options.headers?.['WWW-Authenticate']).toContain('error="invalid_token"');
  });

  it('refuses HS256 signed with the public key as the secret', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: 'k1' })).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(
      JSON.stringify({ ...claims, sub: 'u', iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 60, jti: 'x' }),
    ).toString('base64url');
    const signature = createHmac('sha256', JSON.stringify(publicJwk)).update(`${header}.${body}`).digest('base64url');
    expect((await rejection(`${header}.${body}.${signature}`)).code).toBe('unauthenticated');
  });

  describe('a token naming a key the verifier has not fetched', () => {
    let keys: JWK[];
    let rotatedKey: KeyLike;

    beforeAll(async () => {
      const pair = await generateKeyPair('ES256');
      rotatedKey = pair.privateKey;
      keys = [publicJwk, { ...(await exportJWK(pair.publicKey)), kid: 'k2', alg: 'ES256', use: 'sig' }];
    });

    beforeEach(() => {
      // The key set gains k2 after the first fetch.
      verifier = countingVerifier(300, (fetch) => (fetch === 1 ? [publicJwk] : keys));
    });

    it('is accepted once the key is published, even right after the last fetch (a rotation)', async () => {
      await verifier.verify(await sign());
      const rotated = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k2', typ: 'at+jwt' })
        .setSubject('user-1')
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setJti('jti-2')
        .setExpirationTime('2h')
        .sign(rotatedKey);
      await expect(verifier.verify(rotated)).resolves.toMatchObject({ tokenId: 'jti-2' });
      expect(fetches).toBe(2);
    });

    it('is refused when the key is unknown, the forged kids of one interval sharing one refetch', async () => {
      await verifier.verify(await sign());
      const forged = await Promise.all(Array.from({ length: 20 }, (_, n) => sign({ kid: `forged-${n}` })));
      const refusals = await Promise.all(forged.map(rejection));
      expect(refusals.map((error) => error.code)).toEqual(forged.map(() => 'unauthenticated'));
      expect(refusals[0].message).toContain('The token is signed with an unknown key.');
      expect(fetches).toBe(2);
    });
  });

  it.each([
    ['expired', { exp: Math.floor(Date.now() / 1000) - 60 }],
    ['for another audience', { aud: 'someone-else' }],
    ['from another issuer', { iss: 'https://evil.test' }],
    ['of another type', { typ: 'JWT' }],
  ])('refuses a token %s', async (_, overrides) => {
    expect((await rejection(await sign(overrides))).code).toBe('unauthenticated');
  });

  it('refuses garbage', async () => {
    for (const token of ['', 'abc', 'a.b.c', `${Buffer.from('{}').toString('base64url')}.e30.`]) {
      expect((await rejection(token)).code).toBe('unauthenticated');
    }
  });
});

describe('AccessTokenVerifier verified-token cache', () => {
  let privateKey: KeyLike;
  let publicJwk: JWK;
  let keySet: JWK[];
  let clock: number;
  let revoked: Set<string>;

  const sign = (jti: string, expSeconds: number, kid = 'k1') =>
    new SignJWT({ scope: 'users:read', org_id: 'org-1', client_id: 'web', sid: 'family-1' })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setSubject('user-1')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(Math.floor(clock / 1000))
      .setJti(jti)
      .setExpirationTime(expSeconds)
      .sign(privateKey);

  const verifierWith = (cacheSize?: number) =>
    new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      refetchIntervalMs: 0,
      now: () => clock,
      cacheSize,
      fetchKeys: () => Promise.resolve({ keys: keySet }),
      revocations: { isRevoked: ({ jti, sid }) => revoked.has(jti) || (!!sid && revoked.has(sid)) },
    });

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  });

  beforeEach(() => {
    (jose.jwtVerify as jest.Mock).mockClear();
    clock = Date.now();
    keySet = [publicJwk];
    revoked = new Set();
  });

  it('reuses a verification for the same token string', async () => {
    const verifier = verifierWith();
    const token = await sign('jti-a', Math.floor(clock / 1000) + 600);
    const first = await verifier.verify(token);
    const second = await verifier.verify(token);
    expect(second).toEqual(first);
    expect(fullVerifications()).toBe(1);
  });

  it('does not use a remembered verification at or after the token expires', async () => {
    const verifier = verifierWith();
    const exp = Math.floor(clock / 1000) + 60;
    const token = await sign('jti-b', exp);
    await verifier.verify(token);
    clock = exp * 1000 + 10_000; // past exp and past jose's 5 s clock tolerance
    await expect(verifier.verify(token)).rejects.toThrow('The token has expired.');
    expect(fullVerifications()).toBe(2);
  });

  it('refuses a remembered token once its jti or its family is revoked', async () => {
    const verifier = verifierWith();
    const byJti = await sign('jti-c', Math.floor(clock / 1000) + 600);
    const byFamily = await sign('jti-d', Math.floor(clock / 1000) + 600);
    await verifier.verify(byJti);
    await verifier.verify(byFamily);
    revoked.add('jti-c');
    await expect(verifier.verify(byJti)).rejects.toThrow('The token has been revoked.');
    await expect(verifier.verify(byFamily)).resolves.toMatchObject({ tokenId: 'jti-d' });
    revoked.add('family-1');
    await expect(verifier.verify(byFamily)).rejects.toThrow('The token has been revoked.');
    expect(fullVerifications()).toBe(2);
  });

  it('refuses a remembered token whose signing key has left the key set', async () => {
    const verifier = verifierWith();
    const token = await sign('jti-e', Math.floor(clock / 1000) + 600);
    await verifier.verify(token);
    keySet = [];
    // A token naming another key makes the verifier refetch the key set, which no longer has k1.
    await expect(verifier.verify(await sign('jti-f', Math.floor(clock / 1000) + 600, 'k2'))).rejects.toThrow(
      'The token is signed with an unknown key.',
    );
    await expect(verifier.verify(token)).rejects.toThrow('The token is signed with an unknown key.');
  });

  it('refuses the tokens of a key auth withdrew as soon as the withdrawal is announced, remembered or new', async () => {
    let announce: (message: string) => void = () => undefined;
    const verifier = followKeyWithdrawals(verifierWith(), {
      onNotice: (topic, handler) => {
        if (topic === KEY_WITHDRAWAL_TOPIC) announce = handler;
        return Promise.resolve();
      },
    });
    const remembered = await sign('jti-w1', Math.floor(clock / 1000) + 600);
    await verifier.verify(remembered);

    // `rotate-signing-key --withdraw-old` (k1 may have leaked); the auth answering the key set's next
    // read had read its keys a moment before the withdrawal, and still publishes k1.
    announce(JSON.stringify(['k1']));
    await expect(verifier.verify(remembered)).rejects.toThrow('The token is signed with an unknown key.');
    const forged = await sign('jti-w2', Math.floor(clock / 1000) + 600);
    await expect(verifier.verify(forged)).rejects.toThrow('The token is signed with an unknown key.');
  });

  it('ignores a malformed withdrawal notice', () => {
    expect(withdrawnKidsOf('not json')).toEqual([]);
    expect(withdrawnKidsOf('{"kid":"k1"}')).toEqual([]);
    expect(withdrawnKidsOf('["k1", 2, ""]')).toEqual(['k1']);
  });

  it('refuses tokens of a key that left the key set once the set is older than its max age, no other key named', async () => {
    // A rotation because the old key may have leaked: auth publishes k1 until its tokens expire, then
    // stops. No token names a new key afterwards (the verifier learnt it long before).
    let fetches = 0;
    const verifier = new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keySetMaxAgeMs: 50,
      fetchKeys: () => {
        fetches += 1;
        return Promise.resolve({ keys: keySet });
      },
      revocations: { isRevoked: () => false },
    });
    const remembered = await sign('jti-g', Math.floor(clock / 1000) + 600);
    await verifier.verify(remembered);
    keySet = [];
    await verifier.verify(remembered); // within the max age: no read
    expect(fetches).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    // The request that finds the set stale does not wait for its read; the requests after it see it.
    await verifier.verify(remembered).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(fetches).toBe(2);
    await expect(verifier.verify(remembered)).rejects.toThrow('The token is signed with an unknown key.');
    // Minted with the old private key after it left the set (what a holder of a leaked key would do).
    await expect(verifier.verify(await sign('jti-h', Math.floor(clock / 1000) + 600))).rejects.toThrow(
      'The token is signed with an unknown key.',
    );
  });

  it('keeps verifying with the keys it has while a stale key set cannot be read, trying again a max age later', async () => {
    let fetches = 0;
    let authAnswers = true;
    const verifier = new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keySetMaxAgeMs: 50,
      fetchKeys: () => {
        fetches += 1;
        return authAnswers ? Promise.resolve({ keys: keySet }) : Promise.reject(new Error('auth is down'));
      },
      revocations: { isRevoked: () => false },
    });
    const token = await sign('jti-i', Math.floor(clock / 1000) + 600);
    await verifier.verify(token);
    authAnswers = false;
    await new Promise((resolve) => setTimeout(resolve, 60));
    for (let request = 0; request < 5; request += 1) {
      await expect(verifier.verify(token)).resolves.toMatchObject({ tokenId: 'jti-i' });
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(fetches).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await verifier.verify(token);
    expect(fetches).toBe(3);
  });

  it('remembers at most cacheSize tokens, dropping the least recently used', async () => {
    const verifier = verifierWith(2);
    const [a, b, c] = await Promise.all(['1', '2', '3'].map((jti) => sign(jti, Math.floor(clock / 1000) + 600)));
    await verifier.verify(a);
    await verifier.verify(b);
    await verifier.verify(a); // a is now the most recently used
    await verifier.verify(c); // drops b
    expect(fullVerifications()).toBe(3);
    await verifier.verify(a);
    await verifier.verify(c);
    expect(fullVerifications()).toBe(3);
    await verifier.verify(b);
    expect(fullVerifications()).toBe(4);
  });
});

describe('scopes and roles', () => {
  it('gives each role its default scopes', () => {
    expect(scopesOfRoles(['viewer'])).toEqual(['system:read', 'users:read']);
    expect(scopesOfRoles(['admin'])).toEqual(['instances:write', 'system:read', 'users:read', 'users:write']);
  });

  it('lets a caller grant only roles at or below its own', () => {
    expect(mayGrant(['admin'], ['member', 'viewer', 'admin'])).toBe(true);
    expect(mayGrant(['member'], ['member', 'viewer'])).toBe(true);
    expect(mayGrant(['member'], ['admin'])).toBe(false);
    expect(mayGrant([], ['viewer'])).toBe(false);
    expect(mayGrant(['admin'], ['owner'])).toBe(false);
  });

  it('parses space-separated scopes without repeats', () => {
    expect(parseScope(' users:read  users:read system:read ')).toEqual(['users:read', 'system:read']);
    expect(parseScope(undefined)).toEqual([]);
  });
});

describe('bearerToken', () => {
  it('takes the token of a Bearer header, whatever the scheme case', () => {
    expect(bearerToken('Bearer abc.def-ghi_jkl')).toBe('abc.def-ghi_jkl');
    expect(bearerToken('bearer abc')).toBe('abc');
  });

  it('takes the token after more than one space (RFC 6750 §2.1: "Bearer" 1*SP b64token)', () => {
    expect(bearerToken('Bearer  abc')).toBe('abc');
  });

  it.each([undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', ['Bearer abc']])('finds none in %p', (header) => {
    expect(bearerToken(header)).toBeUndefined();
  });
});
