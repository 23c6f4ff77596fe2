import { createHash, randomInt } from 'node:crypto';

/** Contract §7: a set holds 10 codes. */
export const RECOVERY_CODE_COUNT = 10;

/** Crockford's base32 alphabet: no I, L, O or U, so a code read aloud or typed is not misread. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 16 characters of 5 bits: 80 random bits per code. */
const LENGTH = 16;
const GROUP = 4;

/** A new code from the CSPRNG, shown in groups of four: `7KQ2-M9XD-4RTB-H0CE`. */
export function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i += 1) code += ALPHABET[randomInt(ALPHABET.length)];
  return code.match(new RegExp(`.{${GROUP}}`, 'g'))?.join('-') ?? code;
}

/**
 * The code as it is hashed: upper case, without the separators and spaces people type, Crockford's
 * look-alikes mapped (I, L → 1; O → 0). Undefined for anything that cannot be a recovery code (a TOTP
 * code, say), so the caller need not look it up.
 */
export function normalisedRecoveryCode(input: string): string | undefined {
  const code = input.replace(/[\s-]/g, '').toUpperCase().replace(/[IL]/g, '1').replace(/O/g, '0');
  if (code.length !== LENGTH) return undefined;
  for (const char of code) if (!ALPHABET.includes(char)) return undefined;
  return code;
}

/**
 * What is stored of a code: SHA-256 (hex) of its normalised form. A code holds 80 random bits and is
 * looked up by this hash, so a fast unkeyed hash is enough (as for refresh tokens): nothing about a
 * code can be guessed from a leaked table faster than the code itself.
 */
export function recoveryCodeHash(normalised: string): string {
  return createHash('sha256').update(normalised).digest('hex');
}
