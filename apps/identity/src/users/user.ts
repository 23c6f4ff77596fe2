import { createHash } from 'node:crypto';

import { identityV1 } from '@acct/contracts';

export const USER_STATUSES = ['pending', 'active', 'disabled'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

export const isUserStatus = (value: string): value is UserStatus =>
  (USER_STATUSES as readonly string[]).includes(value);

/** A user as the service works with it; never a Prisma type, never the password hash. */
export interface UserRecord {
  id: string;
  orgId: string;
  /** As given, trimmed. */
  email: string;
  /** E.164, or null when the user has none. */
  phone: string | null;
  displayName: string;
  status: UserStatus;
  roles: string[];
  locale: string;
  timeZone: string;
  createdAt: Date;
  /** Set when the user first set its password; an enabled user goes back to `active` only then. */
  activatedAt: Date | null;
}

/**
 * The strong entity tag of a user's state (contract §7): a digest of every field a client can see or
 * change, so it changes exactly when the user does (a new status, role, name, phone or profile).
 */
export function etagOf(user: UserRecord): string {
  const state = [
    user.id,
    user.orgId,
    user.email,
    user.phone,
    user.displayName,
    user.status,
    user.roles,
    user.locale,
    user.timeZone,
    user.createdAt.toISOString(),
  ];
  return createHash('sha256').update(JSON.stringify(state)).digest('base64url').slice(0, 27);
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
    ...(user.phone === null ? {} : { phone: user.phone }),
    etag: etagOf(user),
  };
}
