import { z } from 'zod';

/**
 * Contract §4: TOTP enrolment (`POST /v2/users/me/mfa/totp`) and its answer. The body carries the
 * current password: an access token alone (a stolen one) cannot enrol a second factor.
 */
export const enrollBody = z.object({ password: z.string().min(1).max(1024) }).strict();
export const enrolment = z
  .object({ secret: z.string().min(16), otpauth_uri: z.string().regex(/^otpauth:\/\/totp\//) })
  .strict();
export type Enrolment = z.output<typeof enrolment>;

/** Its confirmation with a first code (`POST /v2/users/me/mfa/totp/confirm`) and its answer. */
export const confirmBody = z.object({ code: z.string().regex(/^\d{6}$/, 'must be 6 digits') }).strict();
export const confirmation = z.object({ enabled: z.literal(true), confirmed_at: z.iso.datetime() }).strict();
export type Confirmation = z.output<typeof confirmation>;
