import { generateSecret, generateURI, verifySync } from 'otplib';

/** Contract §4: RFC 6238 with 6 digits, 30-second steps, one step of drift either way. */
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_WINDOW_STEPS = 1;

const CODE = /^\d{6}$/;

/** A fresh random secret: 20 bytes (160 bits, RFC 4226 §4), base32 without padding. */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The `otpauth://totp/…` URI authenticator apps read from a QR code. */
export function totpUri(secret: string, issuer: string, account: string): string {
  return generateURI({ issuer, label: account, secret, digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS });
}

/**
 * The RFC 6238 time step `code` belongs to when it is right for `secret` at `nowMs` (±1 step), else
 * undefined. The comparison is otplib's constant-time one; anything but six digits is simply wrong.
 */
export function matchingStep(secret: string, code: string, nowMs: number): number | undefined {
  if (!CODE.test(code)) return undefined;
  const result = verifySync({
    secret,
    token: code,
    epoch: Math.floor(nowMs / 1000),
    period: TOTP_PERIOD_SECONDS,
    digits: TOTP_DIGITS,
    epochTolerance: TOTP_WINDOW_STEPS * TOTP_PERIOD_SECONDS,
  });
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}
