import { z } from 'zod';

/** Contract §4: TOTP enrolment (`POST /v2/users/me/mfa/totp`, no body or `{}`) and its answer. */
export const enrollBody = z.object({}).strict();
export const enrolment = z
  .object({ secret: z.string().min(16), otpauth_uri: z.string().regex(/^otpauth:\/\/totp\//) })
  .strict();
export type Enrolment = z.output<typeof enrolment>;

/** Its confirmation with a first code (`POST /v2/users/me/mfa/totp/confirm`) and its answer. */
export const confirmBody = z.object({ code: z.string().regex(/^\d{6}$/, 'must be 6 digits') }).strict();
export const confirmation = z.object({ enabled: z.literal(true), confirmed_at: z.iso.datetime() }).strict();
export type Confirmation = z.output<typeof confirmation>;
