import { canonicalJson, fingerprintOf } from './fingerprint';

describe('fingerprint', () => {
  it('does not depend on the order of keys, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(fingerprintOf({ email: 'a', profile: { locale: 'en', timezone: 'UTC' } })).toBe(
      fingerprintOf({ profile: { timezone: 'UTC', locale: 'en' }, email: 'a' }),
    );
  });

  it('leaves out undefined members, as JSON does', () => {
    expect(fingerprintOf({ email: 'a', password: undefined })).toBe(fingerprintOf({ email: 'a' }));
  });

  it('tells apart requests that differ anywhere', () => {
    const base = fingerprintOf({ email: 'a', roles: ['member'] });
    expect(fingerprintOf({ email: 'A', roles: ['member'] })).not.toBe(base);
    expect(fingerprintOf({ email: 'a', roles: [] })).not.toBe(base);
    expect(fingerprintOf({ email: 'a', roles: ['member'], sendActivation: false })).not.toBe(base);
    expect(fingerprintOf({ email: 'a', roles: ['member'] })).toMatch(/^[0-9a-f]{64}$/);
  });
});
