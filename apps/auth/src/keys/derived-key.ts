import { hkdfSync } from 'node:crypto';

/**
 * A 32-byte key for one purpose, derived (HKDF-SHA256, no salt) from AUTH_KEY_ENCRYPTION_KEY (base64),
 * so every auth instance derives the same key and no purpose's key reveals another's. `purpose` is
 * the HKDF info (`auth:device-credentials`, `auth:sign-in-seals`): changing it, or this derivation,
 * invalidates everything issued under the old key.
 */
export function deriveKey(keyEncryptionKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(keyEncryptionKey, 'base64'), '', purpose, 32));
}
