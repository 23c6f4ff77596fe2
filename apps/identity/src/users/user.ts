import { identityV1 } from '@acct/contracts';

export type UserStatus = 'pending' | 'active';

/** A user as the service works with it; never a Prisma type, never the password hash. */
export interface UserRecord {
  id: string;
  orgId: string;
  /** As given, trimmed. */
  email: string;
  displayName: string;
  status: UserStatus;
  roles: string[];
  locale: string;
  timeZone: string;
  createdAt: Date;
}

/** The user as the gRPC contract carries it: `created_at` ISO 8601 UTC with milliseconds. */
export function toUserMessage(user: UserRecord): identityV1.User {
  return {
    id: user.id,
    orgId: user.orgId,
    email: user.email,
    displayName: user.displayName,
    status: user.status,
    roles: [...user.roles],
    createdAt: user.createdAt.toISOString(),
  };
}
