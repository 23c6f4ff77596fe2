import { randomBytes } from 'node:crypto';

import { KeyEncryption } from './key-encryption';

describe('KeyEncryption', () => {
  const encryption = new KeyEncryption(randomBytes(32).toString('base64'));
  const pem = '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n';

  it('round-trips a private key without storing it in the clear', () => {
    const stored = encryption.encrypt(pem, 'kid-1');
    expect(stored).not.toContain('PRIVATE KEY');
    expect(encryption.decrypt(stored, 'kid-1')).toBe(pem);
  });

  it('uses a fresh IV each time', () => {
    expect(encryption.encrypt(pem, 'kid-1')).not.toBe(encryption.encrypt(pem, 'kid-1'));
  });

  it('refuses a ciphertext moved to another key id', () => {
    const stored = encryption.encrypt(pem, 'kid-1');
    expect(() => encryption.decrypt(stored, 'kid-2')).toThrow('cannot be decrypted');
  });

  it('refuses a ciphertext made under another encryption key', () => {
    const other = new KeyEncryption(randomBytes(32).toString('base64'));
    expect(() => encryption.decrypt(other.encrypt(pem, 'kid-1'), 'kid-1')).toThrow('cannot be decrypted');
  });

  it('refuses a ciphertext whose tag was cut short: a 4-byte tag is forged in 2^32 tries, not 2^128', () => {
    const stored = encryption.encrypt(pem, 'kid-1');
    const [iv, tag, ciphertext] = stored.slice('aes256gcm:'.length).split('.');
    const short = Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url');
    expect(() => encryption.decrypt(`aes256gcm:${iv}.${short}.${ciphertext}`, 'kid-1')).toThrow('cannot be decrypted');
  });

  it('refuses a plaintext PEM', () => {
    expect(() => encryption.decrypt(pem, 'kid-1')).toThrow('not stored encrypted');
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new KeyEncryption(randomBytes(16).toString('base64'))).toThrow('32 bytes');
    expect(() => new KeyEncryption(randomBytes(32).toString('base64'), randomBytes(16).toString('base64'))).toThrow(
      '32 bytes',
    );
  });
});

describe('KeyEncryption while the key is changed (AUTH_KEY_ENCRYPTION_KEY_PREVIOUS)', () => {
  const oldKey = randomBytes(32).toString('base64');
  const newKey = randomBytes(32).toString('base64');
  const before = new KeyEncryption(oldKey);
  const during = new KeyEncryption(newKey, oldKey);
  const after = new KeyEncryption(newKey);
  const secret = 'JBSWY3DPEHPK3PXP';

  it('reads what the previous key encrypted, and writes under the new one alone', () => {
    expect(during.decrypt(before.encrypt(secret, 'mfa-totp:u1'), 'mfa-totp:u1')).toBe(secret);
    const written = during.encrypt(secret, 'mfa-totp:u1');
    expect(after.decrypt(written, 'mfa-totp:u1')).toBe(secret);
    expect(() => before.decrypt(written, 'mfa-totp:u1')).toThrow('cannot be decrypted');
  });

  it('reseals a value of the previous key under the new one, and leaves one already there alone', () => {
    const resealed = during.reseal(before.encrypt(secret, 'mfa-totp:u1'), 'mfa-totp:u1');
    expect(after.decrypt(resealed ?? '', 'mfa-totp:u1')).toBe(secret);
    expect(during.reseal(after.encrypt(secret, 'mfa-totp:u1'), 'mfa-totp:u1')).toBeUndefined();
  });

  it('still binds a value to its row, under either key', () => {
    expect(() => during.decrypt(before.encrypt(secret, 'mfa-totp:u1'), 'mfa-totp:u2')).toThrow('cannot be decrypted');
    expect(() => during.reseal(before.encrypt(secret, 'mfa-totp:u1'), 'mfa-totp:u2')).toThrow('either');
  });

  it('reads nothing of a third key', () => {
    const other = new KeyEncryption(randomBytes(32).toString('base64'));
    expect(() => during.decrypt(other.encrypt(secret, 'kid-1'), 'kid-1')).toThrow('cannot be decrypted');
  });
});
