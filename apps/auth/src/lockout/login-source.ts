import { addressKey, canonicalAddress } from '@acct/limits';

/** Where a login attempt comes from, as the lockout rules see it. */
export interface LoginSource {
  /** Trimmed and lower-cased. */
  username: string;
  /**
   * The client as the lockout and the ceiling's known sources key it (`clientKeyOf`): an IPv4 address,
   * or an IPv6 client's /64.
   */
  clientIp: string;
  /** `X-Device-Id`, or empty: recorded, never trusted (the client picks it). */
  deviceId: string;
  /**
   * The device credential the client presented (`X-Device-Token`, the login page's device cookie), or
   * empty: exempts it from the account-wide ceiling when auth issued it to this username (device-credentials.ts).
   */
  deviceToken?: string;
}

/** The canonical client address's key (`@acct/limits`); a value that is not an address stays as it is. */
export const clientKeyOf = (clientIp: string): string => {
  const address = canonicalAddress(clientIp);
  return address ? addressKey(address) : clientIp;
};
