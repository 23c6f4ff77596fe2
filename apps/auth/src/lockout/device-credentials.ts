import { createHmac, randomUUID } from 'node:crypto';

import { Clock } from '@acct/clock';
import { Inject, Injectable } from '@nestjs/common';
import { jwtVerify, SignJWT } from 'jose';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { deriveKey } from '../keys/derived-key';

/** How long a device credential exempts its device from the ceiling; each successful login renews it. */
export const DEVICE_CREDENTIAL_TTL_SECONDS = 90 * 24 * 60 * 60;
const TYPE = 'device+jwt';
const ALGORITHM = 'HS256';
/** Far above a genuine credential's length: anything longer is not one, and is not parsed. */
const MAX_LENGTH = 1024;

/**
 * Device credentials: what a client presents so the account-wide ceiling knows it as one of the
 * account's own devices. Issued by auth at each successful password login (token endpoint and login
 * page), it is a JWT (HS256) whose key is derived for the username it was issued to: HMAC of the
 * username under a key derived (HKDF) from AUTH_KEY_ENCRYPTION_KEY, so every auth instance accepts
 * what another issued, nothing about the user is readable in it but its id, and a credential of one
 * user, a changed byte or an expired one verifies for no other attempt. It holds a random id
 * (`jti`) and the user id; it is not stored.
 */
@Injectable()
export class DeviceCredentials {
  private readonly key: Buffer;
  private readonly issuer: string;

  constructor(
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.key = deriveKey(config.AUTH_KEY_ENCRYPTION_KEY, 'auth:device-credentials');
    this.issuer = config.TOKEN_ISSUER;
  }

  /** A new credential for a device that just logged in to `username` (normalised) as `userId`. */
  issue(username: string, userId: string): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: ALGORITHM, typ: TYPE })
      .setIssuer(this.issuer)
      .setSubject(userId)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + DEVICE_CREDENTIAL_TTL_SECONDS)
      .sign(this.keyFor(username));
  }

  /** Whether `credential` is genuine, unexpired and was issued for `username`; false for anything else. */
  async isValidFor(username: string, credential: string): Promise<boolean> {
    if (credential.length === 0 || credential.length > MAX_LENGTH) return false;
    try {
      await jwtVerify(credential, this.keyFor(username), {
        algorithms: [ALGORITHM],
        typ: TYPE,
        issuer: this.issuer,
        requiredClaims: ['sub', 'jti', 'exp'],
        currentDate: this.clock.date(),
      });
      return true;
    } catch {
      return false;
    }
  }

  private keyFor(username: string): Uint8Array {
    return createHmac('sha256', this.key).update(`device-credential.${username}`, 'utf8').digest();
  }
}
