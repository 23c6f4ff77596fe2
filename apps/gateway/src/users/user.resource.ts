import { identityV1 } from '@acct/contracts';

/** Interface §2.1: the only fields of a user a client ever sees. */
export interface UserResource {
  id: string;
  email: string;
  display_name: string;
  status: string;
  roles: string[];
  created_at: string;
}

export function toUserResource(user: identityV1.User | undefined): UserResource {
  if (!user) throw new Error('identity answered without a user');
  return {
    id: user.id,
    email: user.email,
    display_name: user.displayName,
    status: user.status,
    roles: user.roles,
    created_at: user.createdAt,
  };
}
