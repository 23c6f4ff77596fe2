import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'aes256gcm:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Private signing keys at rest: AES-256-GCM under a key from the environment, with the key id as
 * associated data (a stored ciphertext cannot be moved to another row). Stored as
 * `aes256gcm:<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export class KeyEncryption {
  private readonly key: Buffer;

  constructor(base64Key: string) {
    this.key = Buffer.from(base64Key, 'base64');
    if (this.key.length !== 32) throw new Error('the key encryption key must be 32 bytes');
  }

  encrypt(plaintext: string, kid: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(kid, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${PREFIX}${[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.')}`;
  }

  /** Throws when the value was not encrypted under this key for this kid. */
  decrypt(stored: string, kid: string): string {
    const parts = stored.startsWith(PREFIX) ? stored.slice(PREFIX.length).split('.') : [];
    if (parts.length !== 3) throw new Error(`signing key ${kid} is not stored encrypted`);
    const [iv, tag, ciphertext] = parts.map((part) => Buffer.from(part, 'base64url'));
    // The full 16-byte tag only: Node accepts a shorter one unless told its length (NIST SP 800-38D),
    // and a 4-byte tag is forged in 2^32 tries.
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(kid, 'utf8'));
    try {
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`signing key ${kid} cannot be decrypted with AUTH_KEY_ENCRYPTION_KEY`);
    }
  }
}
