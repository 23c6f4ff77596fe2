import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'aes256gcm:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Secrets at rest (private signing keys, TOTP secrets): AES-256-GCM under a key from the environment,
 * with associated data naming the row (the key id: a stored ciphertext cannot be moved to another
 * row). Stored as `aes256gcm:<iv>.<tag>.<ciphertext>`, each part base64url.
 *
 * While the key is changed (AUTH_KEY_ENCRYPTION_KEY_PREVIOUS, docs/runbook.md) a value is still read
 * under the previous key; everything is written under the current one, and `reseal` moves a value there.
 */
export class KeyEncryption {
  private readonly key: Buffer;
  private readonly previous?: Buffer;

  constructor(base64Key: string, previousBase64Key = '') {
    this.key = keyOf(base64Key);
    if (previousBase64Key !== '') this.previous = keyOf(previousBase64Key);
  }

  encrypt(plaintext: string, kid: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(kid, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${PREFIX}${[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.')}`;
  }

  /** Throws when the value was not encrypted for this kid under the key (or the previous one). */
  decrypt(stored: string, kid: string): string {
    const opened = this.open(stored, kid);
    if (opened === undefined) throw new Error(`signing key ${kid} cannot be decrypted with AUTH_KEY_ENCRYPTION_KEY`);
    return opened.plaintext;
  }

  /**
   * The value encrypted under the current key: undefined when it already is, and an error when neither
   * key decrypts it.
   */
  reseal(stored: string, kid: string): string | undefined {
    const opened = this.open(stored, kid);
    if (opened === undefined) throw new Error(`${kid} cannot be decrypted with either AUTH_KEY_ENCRYPTION_KEY`);
    return opened.current ? undefined : this.encrypt(opened.plaintext, kid);
  }

  private open(stored: string, kid: string): { plaintext: string; current: boolean } | undefined {
    const parts = stored.startsWith(PREFIX) ? stored.slice(PREFIX.length).split('.') : [];
    if (parts.length !== 3) throw new Error(`signing key ${kid} is not stored encrypted`);
    const [iv, tag, ciphertext] = parts.map((part) => Buffer.from(part, 'base64url'));
    const plaintext = decipher(this.key, iv, tag, ciphertext, kid);
    if (plaintext !== undefined) return { plaintext, current: true };
    const previous = this.previous && decipher(this.previous, iv, tag, ciphertext, kid);
    return previous === undefined ? undefined : { plaintext: previous, current: false };
  }
}

function keyOf(base64Key: string): Buffer {
  const key = Buffer.from(base64Key, 'base64');
  if (key.length !== 32) throw new Error('the key encryption key must be 32 bytes');
  return key;
}

/** The plaintext, or undefined when the value was not encrypted under `key` for `kid`. */
function decipher(key: Buffer, iv: Buffer, tag: Buffer, ciphertext: Buffer, kid: string): string | undefined {
  // The full 16-byte tag only: Node accepts a shorter one unless told its length (NIST SP 800-38D),
  // and a 4-byte tag is forged in 2^32 tries.
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(kid, 'utf8'));
  try {
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
