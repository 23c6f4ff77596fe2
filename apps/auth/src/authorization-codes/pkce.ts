import { createHash, timingSafeEqual } from 'node:crypto';

/** An S256 challenge: base64url of a SHA-256, 43 characters (RFC 7636 §4.2). */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Whether `verifier` is the one `challenge` was made from with S256; constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier) || !S256_CHALLENGE.test(challenge)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  return timingSafeEqual(computed, Buffer.from(challenge));
}
