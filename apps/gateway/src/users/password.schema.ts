import { isUnicodeText } from '@acct/user-fields';
import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/** `POST /v2/users/me/password` (contract §3); identity checks the length, a lone surrogate cannot reach it. */
export const setPasswordBody = z
  .object({ password: z.string().refine(isUnicodeText, 'must be valid Unicode text') })
  .strict();

/** `POST /v2/users/{id}/reset-password` (contract §3); `send_email` defaults to true. */
export const resetPasswordBody = z.object({ send_email: z.boolean().optional() }).strict();

/** `send_email: false`: the one-time token, for the caller to deliver. */
export const oneTimeToken = z
  .object({
    token: z
      .string()
      .describe('One-time, 24-hour token of scope password:set: the bearer credential of POST /v2/users/me/password.'),
    expires_at: z.iso.datetime(),
  })
  .strict()
  .register(apiSchemas, { id: 'OneTimeToken' });

export type OneTimeToken = z.output<typeof oneTimeToken>;

/** `send_email: true`: nothing to say but 202. */
export const resetAccepted = z.object({}).strict().register(apiSchemas, { id: 'Empty' });

export type ResetAccepted = z.output<typeof resetAccepted>;
