import { AccessTokenVerifier } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { exportJWK, generateKeyPair, JWK, SignJWT } from 'jose';

import { AccessTokenStrategy } from './access-token.strategy';
import { AuthenticateHook } from './authenticate.hook';
import { Authentication } from './authenticated-request';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'account-platform';

describe('the authenticate hook (passport strategy over the access-token verifier)', () => {
  let sign: (claims?: Record<string, unknown>) => Promise<string>;
  let keysAvailable = true;
  let keyFetches = 0;
  let hook: AuthenticateHook;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const now = Math.floor(Date.now() / 1000);
    sign = (claims = {}) =>
      new SignJWT({
        ...{ iss: ISSUER, aud: AUDIENCE, sub: 'user-1', jti: 'token-1', iat: now, exp: now + 7200 },
        ...{ scope: 'users:read', org_id: 'org-1', client_id: 'web', roles: ['admin'] },
        ...claims,
      })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
        .sign(privateKey);
    const verifier = new AccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      refetchIntervalMs: 0,
      fetchKeys: () =>
        ++keyFetches && keysAvailable
          ? Promise.resolve({ keys: [jwk] })
          : Promise.reject(new DomainError('service_unavailable', 'auth is unavailable', { retryAfter: 1 })),
    });
    hook = new AuthenticateHook(new AccessTokenStrategy(verifier));
    hook.tokenlessRoutes([{ method: 'GET', path: '/v2/system/health' }]);
  });

  beforeEach(() => {
    keysAvailable = true;
  });

  async function authenticate(headers: Record<string, string>, query: Record<string, string> = {}, url = '/v2/users') {
    const request = {
      ...{ method: 'GET', routeOptions: { url }, headers, query, body: { access_token: headers['x-body-token'] } },
    } as unknown as FastifyRequest & Authentication;
    await hook.handle(request, {} as FastifyReply);
    return request;
  }

  const challengeOf = (error: Error | undefined) =>
    error instanceof DomainError ? { code: error.code, challenge: error.options.headers?.['WWW-Authenticate'] } : error;

  it('sets the caller and its token for a valid bearer token, whatever the case of the scheme', async () => {
    const token = await sign();
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const request = await authenticate({ authorization: `${scheme} ${token}` });
      expect(request.caller).toMatchObject({ subject: 'user-1', orgId: 'org-1', tokenId: 'token-1' });
      expect(request.accessToken).toBe(token);
      expect(request.authFailure).toBeUndefined();
    }
  });

  it('leaves a request without Authorization alone: public routes go on, the guard answers the rest', async () => {
    const request = await authenticate({});
    expect({ caller: request.caller, failure: request.authFailure }).toEqual({ caller: undefined, failure: undefined });
  });

  it('reads the token from the Authorization header only, never from the query or the body', async () => {
    const token = await sign();
    const request = await authenticate({ 'x-body-token': token }, { access_token: token });
    expect(request.caller).toBeUndefined();
  });

  it.each([['Basic dXNlcjpwYXNz'], ['Bearer'], ['Bearer '], ['Bearer a b'], ['Token abc']])(
    'keeps a 401 invalid_token with the realm for the header %p',
    async (header) => {
      const request = await authenticate({ authorization: header });
      expect(request.caller).toBeUndefined();
      expect(challengeOf(request.authFailure)).toEqual({
        code: 'unauthenticated',
        challenge: 'Bearer realm="account-platform", error="invalid_token"',
      });
    },
  );

  it.each([
    ['garbage', () => Promise.resolve('not-a-jwt'), 'The token is malformed.'],
    ['an expired token', () => sign({ exp: Math.floor(Date.now() / 1000) - 60 }), 'The token has expired.'],
    ['a token of another audience', () => sign({ aud: 'someone-else' }), 'The token is invalid.'],
  ])('keeps the verifier’s own 401 for %s', async (_name, token, description) => {
    const request = await authenticate({ authorization: `Bearer ${await token()}` });
    expect(request.caller).toBeUndefined();
    expect(challengeOf(request.authFailure)).toEqual({
      code: 'unauthenticated',
      challenge: `Bearer error="invalid_token", error_description="${description}"`,
    });
  });

  it('reads the token of a route that takes none from the keys at hand: a caller for its tiers, never a wait', async () => {
    const token = await sign();
    await authenticate({ authorization: `Bearer ${token}` });
    const known = await authenticate({ authorization: `Bearer ${token}` }, {}, '/v2/system/health');
    expect(known.caller).toMatchObject({ orgId: 'org-1' });
    const { privateKey } = await generateKeyPair('ES256');
    const unknownKid = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k-retired', typ: 'at+jwt' })
      .sign(privateKey);
    const fetchesBefore = keyFetches;
    const unknown = await authenticate({ authorization: `Bearer ${unknownKid}` }, {}, '/v2/system/health');
    expect({ caller: unknown.caller, failure: unknown.authFailure, fetches: keyFetches - fetchesBefore }).toEqual({
      caller: undefined,
      failure: undefined,
      fetches: 0,
    });
  });

  it('keeps the 503 when the keys cannot be fetched, so the guard answers it rather than a 401', async () => {
    keysAvailable = false;
    const { privateKey } = await generateKeyPair('ES256');
    const unknownKid = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k-unknown', typ: 'at+jwt' })
      .sign(privateKey);
    const request = await authenticate({ authorization: `Bearer ${unknownKid}` });
    expect(request.caller).toBeUndefined();
    expect((request.authFailure as DomainError).code).toBe('service_unavailable');
  });
});
