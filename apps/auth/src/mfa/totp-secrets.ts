import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { KeyEncryption } from '../keys/key-encryption';

/**
 * TOTP secrets at rest: AES-256-GCM under AUTH_KEY_ENCRYPTION_KEY (the signing keys' encryption),
 * bound to the user id as associated data so a stored secret cannot be moved to another user.
 */
@Injectable()
export class TotpSecrets {
  private readonly encryption: KeyEncryption;

  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    this.encryption = new KeyEncryption(config.AUTH_KEY_ENCRYPTION_KEY, config.AUTH_KEY_ENCRYPTION_KEY_PREVIOUS);
  }

  seal(secret: string, userId: string): string {
    return this.encryption.encrypt(secret, associatedData(userId));
  }

  open(stored: string, userId: string): string {
    return this.encryption.decrypt(stored, associatedData(userId));
  }

  /** The stored secret under the current key, or undefined when it is already (`KeyEncryption.reseal`). */
  reseal(stored: string, userId: string): string | undefined {
    return this.encryption.reseal(stored, associatedData(userId));
  }
}

const associatedData = (userId: string) => `mfa-totp:${userId}`;
