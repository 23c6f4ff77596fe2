import { ROLES } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/** Interface §2.1: the only fields of a user a client ever sees. */
export const userResource = z
  .object({
    id: z.string().describe('Server-assigned identifier.'),
    email: z.email().describe('Login e-mail, lower-cased; globally unique.'),
    display_name: z.string().min(1).max(64).describe('1–64 Unicode code points.'),
    status: z.enum(['pending', 'active']),
    roles: z.array(z.enum(ROLES)).min(1),
    created_at: z.iso.datetime().describe('ISO 8601 UTC timestamp.'),
  })
  .strict()
  .register(apiSchemas, { id: 'User', description: 'A user account (interface §2.1).' });

export type UserResource = z.output<typeof userResource>;

export function toUserResource(user: identityV1.User | undefined): UserResource {
  if (!user) throw new Error('identity answered without a user');
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    status: user.status as UserResource['status'],
    roles: user.roles as UserResource['roles'],
    created_at: user.createdAt,
  };
}
