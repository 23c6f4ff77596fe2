import { newRecoveryCode, normalisedRecoveryCode, recoveryCodeHash } from './recovery-codes';

describe('recovery codes', () => {
  it('are 16 Crockford base32 characters in groups of four, and not repeated', () => {
    const codes = Array.from({ length: 1000 }, newRecoveryCode);
    for (const code of codes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('use every character of the alphabet (no bias towards a part of it)', () => {
    const seen = new Set(Array.from({ length: 200 }, newRecoveryCode).join('').replaceAll('-', ''));
    expect(seen.size).toBe(32);
  });

  it('are accepted as typed: lower case, without dashes, with spaces, with I/L/O for 1/1/0', () => {
    const code = '7KQ2-M9XD-4R1B-H0CE';
    const normalised = '7KQ2M9XD4R1BH0CE';
    for (const typed of [
      code,
      '7kq2m9xd4r1bh0ce',
      ' 7KQ2 M9XD 4R1B H0CE ',
      '7KQ2-M9XD-4RLB-HOCE',
      '7kq2-m9xd-4rib-hoce',
    ]) {
      expect(normalisedRecoveryCode(typed)).toBe(normalised);
    }
  });

  it('are refused in any other shape, TOTP codes included', () => {
    for (const typed of [
      '',
      '123456',
      '7KQ2-M9XD-4R1B',
      '7KQ2-M9XD-4R1B-H0CE-A',
      '7KQ2-M9XD-4R1B-H0CU',
      'ÄKQ2M9XD4R1BH0CE',
    ]) {
      expect(normalisedRecoveryCode(typed)).toBeUndefined();
    }
  });

  it('are stored as the SHA-256 of the normalised code, never as the code', () => {
    const hash = recoveryCodeHash('7KQ2M9XD4R1BH0CE');
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain('7KQ2');
    expect(recoveryCodeHash('7KQ2M9XD4R1BH0CF')).not.toBe(hash);
  });
});
