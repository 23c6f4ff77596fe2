import { DomainError } from '@acct/problem';
import { exportJWK, generateKeyPair, JWK, SignJWT } from 'jose';

import { RevocationCheck } from './revocation-check';
import { AccessTokenVerifier } from './verifier';

describe('AccessTokenVerifier with a revocation check', () => {
  const revoked = new Set<string>();
  const seen: Array<Parameters<RevocationCheck['isRevoked']>[0]> = [];
  const check: RevocationCheck = {
    isRevoked: (token) => {
      seen.push(token);
      return revoked.has(token.jti) || (token.sid !== undefined && revoked.has(token.sid));
    },
  };
  let verifier: AccessTokenVerifier;
  let jwk: JWK;
  let sign: (claims: Record<string, unknown>, jti: string) => Promise<string>;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    verifier = new AccessTokenVerifier({
      issuer: 'https://issuer.test',
      audience: 'account-platform',
      fetchKeys: () => Promise.resolve({ keys: [jwk] }),
      revocations: check,
    });
    sign = (claims, jti) =>
      new SignJWT({ scope: 'users:read', org_id: 'org-1', client_id: 'web', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
        .setSubject('user-1')
        .setIssuer('https://issuer.test')
        .setAudience('account-platform')
        .setIssuedAt(1_800_000_000)
        .setJti(jti)
        .setExpirationTime('2h')
        .sign(privateKey);
  });

  it('passes the claims the check needs, and accepts a token that is not revoked', async () => {
    await expect(verifier.verify(await sign({ sid: 'family-1' }, 'jti-ok'))).resolves.toMatchObject({
      tokenId: 'jti-ok',
    });
    expect(seen.at(-1)).toEqual({ jti: 'jti-ok', sid: 'family-1', sub: 'user-1', orgId: 'org-1', iat: 1_800_000_000 });
  });

  it('refuses a revoked token as an invalid token (401)', async () => {
    revoked.add('jti-gone');
    const error = await verifier.verify(await sign({}, 'jti-gone')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'unauthenticated', detail: 'The token has been revoked.' });
    expect(seen.at(-1)?.sid).toBeUndefined();
  });

  it('refuses a token of a revoked family', async () => {
    revoked.add('family-2');
    await expect(verifier.verify(await sign({ sid: 'family-2' }, 'jti-2'))).rejects.toMatchObject({
      code: 'unauthenticated',
    });
  });

  it('passes on what the check throws (503 while it has not loaded)', async () => {
    const unavailable = new AccessTokenVerifier({
      issuer: 'https://issuer.test',
      audience: 'account-platform',
      fetchKeys: () => Promise.resolve({ keys: [jwk] }),
      revocations: {
        isRevoked: () => {
          throw new DomainError('service_unavailable', 'The revocation list is not loaded yet; retry shortly.');
        },
      },
    });
    await expect(unavailable.verify(await sign({}, 'jti-3'))).rejects.toMatchObject({ code: 'service_unavailable' });
  });
});
