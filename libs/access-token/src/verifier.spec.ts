import { createHmac } from 'node:crypto';

import { DomainError } from '@acct/problem';
import { exportJWK, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';

import { bearerToken } from './bearer';
import { mayGrant, parseScope, scopesOfRoles } from './scopes';
import { AccessTokenVerifier } from './verifier';

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

  beforeEach(() => {
    fetches = 0;
    verifier = new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      refetchIntervalMs: 60_000,
      fetchKeys: () => {
        fetches += 1;
        return Promise.resolve({ keys: [publicJwk] });
      },
    });
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

  it('refuses an unknown kid, refetching the keys at most once per interval', async () => {
    await verifier.verify(await sign());
    expect((await rejection(await sign({ kid: 'forged' }))).code).toBe('unauthenticated');
    expect((await rejection(await sign({ kid: 'forged-2' }))).code).toBe('unauthenticated');
    expect(fetches).toBe(1);
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

  it.each([undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', ['Bearer abc']])('finds none in %p', (header) => {
    expect(bearerToken(header)).toBeUndefined();
  });
});
