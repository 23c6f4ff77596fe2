/** Where a login attempt comes from, as the lockout rules see it. */
export interface LoginSource {
  /** Trimmed and lower-cased. */
  username: string;
  clientIp: string;
  /** `X-Device-Id`, or empty. */
  deviceId: string;
}
