import { createHash } from 'node:crypto';

import { canonicalJson, fingerprintKey, requestFingerprint as keyedFingerprint } from './fingerprint';

const KEY = fingerprintKey('the-gateway-secret-of-this-deployment');
const requestFingerprint = (method: string, path: string, body: unknown) => keyedFingerprint(KEY, method, path, body);

describe('request fingerprints', () => {
  it('ignores key order at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[1,{"y":2,"z":1}]},"b":1}',
    );
    expect(requestFingerprint('POST', '/v2/users', { email: 'a@b.c', display_name: 'A' })).toBe(
      requestFingerprint('post', '/v2/users', { display_name: 'A', email: 'a@b.c' }),
    );
  });

  it('differs for another body, path or method', () => {
    const base = requestFingerprint('POST', '/v2/users', { email: 'a@b.c' });
    expect(requestFingerprint('POST', '/v2/users', { email: 'a@b.d' })).not.toBe(base);
    expect(requestFingerprint('POST', '/v2/other', { email: 'a@b.c' })).not.toBe(base);
    expect(requestFingerprint('PUT', '/v2/users', { email: 'a@b.c' })).not.toBe(base);
  });

  it('is keyed: nobody without the gateway secret can recompute it from a guessed body (a password in it)', () => {
    const body = { email: 'a@b.c', display_name: 'A', password: 'Winter2026!' };
    const plain = createHash('sha256')
      .update(`POST /v2/users\n${canonicalJson(body)}`)
      .digest('hex');
    expect(requestFingerprint('POST', '/v2/users', body)).not.toBe(plain);
    expect(
      keyedFingerprint(fingerprintKey('another-deployment-secret-of-32-chars'), 'POST', '/v2/users', body),
    ).not.toBe(requestFingerprint('POST', '/v2/users', body));
  });

  it('keeps array order significant', () => {
    expect(canonicalJson({ roles: ['a', 'b'] })).not.toBe(canonicalJson({ roles: ['b', 'a'] }));
  });
});
