import { createHmac } from 'node:crypto';

/**
 * The RFC 6238 code (SHA-1, 6 digits, 30 s steps) of a base32 secret at `at` (ms), written out so
 * black-box tests need no library (otplib is ESM inside, which the end-to-end Jest runs cannot load).
 */
export function totp(secret: string, at = Date.now()): string {
  let bits = '';
  for (const char of secret.replace(/=+$/, '').toUpperCase()) {
    bits += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf(char).toString(2).padStart(5, '0');
  }
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const hmac = createHmac('sha1', key).update(counter).digest();
  const offset = hmac[hmac.length - 1] & 0x0f;
  return String((hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}
