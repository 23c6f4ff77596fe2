import { createHmac, hkdfSync } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal bodies give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The key of request fingerprints, derived (HKDF-SHA256) from GATEWAY_CLIENT_SECRET: every gateway
 * instance derives the same one, and it is never stored beside the fingerprints.
 */
export const fingerprintKey = (gatewayClientSecret: string): Buffer =>
  Buffer.from(hkdfSync('sha256', gatewayClientSecret, '', 'gateway:request-fingerprint', 32));

/**
 * Contract §3: the request fingerprint is the method, the path and the canonical JSON body. Keyed
 * (HMAC-SHA256): a body may hold a password, and identity keeps the fingerprint for 24 h, where a
 * plain SHA-256 of it would let whoever reads the database test password guesses without argon2's cost.
 */
export function requestFingerprint(key: Buffer, method: string, path: string, body: unknown): string {
  return createHmac('sha256', key)
    .update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}
