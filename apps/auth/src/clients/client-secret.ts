import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, base64url (43 characters). */
export const generateClientSecret = () => randomBytes(32).toString('base64url');

/**
 * SHA-256, hex. A fast hash is the right one here: a secret is 256 random bits, so nothing can be
 * guessed from its hash, and a slow password hash would only make every client_credentials call slow.
 */
export const hashClientSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** Compared against when the client is unknown, so an unknown id costs what a wrong secret costs. */
const DUMMY_HASH = Buffer.from(hashClientSecret('no client has this secret'), 'hex');

/** Whether `presented` hashes to `storedHash`, in constant time; always false without a stored hash. */
export function secretMatches(presented: string, storedHash: string | undefined): boolean {
  const presentedHash = Buffer.from(hashClientSecret(presented), 'hex');
  const known = storedHash !== undefined && /^[0-9a-f]{64}$/.test(storedHash);
  const equal = timingSafeEqual(presentedHash, known ? Buffer.from(storedHash, 'hex') : DUMMY_HASH);
  return known && equal;
}
