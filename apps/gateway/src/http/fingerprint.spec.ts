import { canonicalJson, requestFingerprint } from './fingerprint';

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

  it('keeps array order significant', () => {
    expect(canonicalJson({ roles: ['a', 'b'] })).not.toBe(canonicalJson({ roles: ['b', 'a'] }));
  });
});
