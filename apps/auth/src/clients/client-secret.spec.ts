import { generateClientSecret, hashClientSecret, secretMatches } from './client-secret';

describe('client secrets', () => {
  it('are 256 random bits in base64url', () => {
    const secret = generateClientSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(generateClientSecret()).not.toBe(secret);
  });

  it('are kept as a SHA-256 hash, never in the clear', () => {
    const secret = generateClientSecret();
    const hash = hashClientSecret(secret);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(secret);
  });

  it('match only the secret they were hashed from', () => {
    const secret = generateClientSecret();
    const hash = hashClientSecret(secret);
    expect(secretMatches(secret, hash)).toBe(true);
    expect(secretMatches(`${secret}x`, hash)).toBe(false);
    expect(secretMatches('', hash)).toBe(false);
  });

  it('never match without a stored hash (unknown client)', () => {
    expect(secretMatches('anything', undefined)).toBe(false);
    expect(secretMatches('anything', 'not-hex')).toBe(false);
  });
});
