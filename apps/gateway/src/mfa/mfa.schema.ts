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

/**
 * Contract §7: removing MFA (`DELETE /v2/users/{id}/mfa`). The user itself sends its password and a
 * current code (TOTP or a recovery code); an admin removing another user's sends no body.
 */
export const removeMfaBody = z
  .object({ password: z.string().min(1).max(1024), mfa_code: z.string().min(1).max(64) })
  .partial()
  .strict();

/** New recovery codes (`POST /v2/users/me/mfa/recovery-codes`): the current password, and the answer. */
export const recoveryCodesBody = z.object({ password: z.string().min(1).max(1024) }).strict();
export const recoveryCodes = z
  .object({
    codes: z
      .array(z.string().regex(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/))
      .length(10)
      .describe('Shown this once; each works once as `mfa_code`.'),
    created_at: z.iso.datetime(),
  })
  .strict();
export type RecoveryCodes = z.output<typeof recoveryCodes>;
