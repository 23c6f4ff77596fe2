import { z } from 'zod';

import { pageQuery } from '../http/page-query';
import { displayName, languageTag, roleList, timeZone } from './create-user.schema';

/** `GET /v2/users` query (contract §7). Unknown parameters are ignored. */
export const listUsersQuery = z.object({
  status: z.enum(['pending', 'active', 'disabled'], { error: 'must be one of pending, active, disabled' }).optional(),
  q: z.string().max(254, 'must be at most 254 characters').optional(),
  ...pageQuery,
});

/**
 * `PATCH /v2/users/{id}` body: a JSON merge patch (RFC 7396) of the fields an admin may change.
 * `null` removes `phone` and puts `profile.locale` / `profile.timezone` back to their defaults
 * (`profile: null` both of them); `display_name` and `roles` cannot be removed. Unknown fields are
 * refused.
 */
export const patchUserBody = z
  .object({
    display_name: displayName.optional(),
    roles: roleList.optional(),
    phone: z
      .string()
      .max(32, 'must be at most 32 characters')
      .nullable()
      .optional()
      .describe('E.164 after normalisation (spaces, dashes, `00` prefix); `null` removes it.'),
    profile: z
      .object({
        locale: languageTag.nullable().optional(),
        timezone: timeZone.nullable().optional(),
      })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();
