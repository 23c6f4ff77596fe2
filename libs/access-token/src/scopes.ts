/** Roles of a user, from most to least powerful. */
export const ROLES = ['admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/** The scopes of the public API (interface §4). */
export const USERS_READ_SCOPE = 'users:read';
export const USERS_WRITE_SCOPE = 'users:write';
export const SYSTEM_READ_SCOPE = 'system:read';
export const INSTANCES_WRITE_SCOPE = 'instances:write';

/** Contract §4: the scopes a token gets when none are asked for. */
export const ROLE_DEFAULT_SCOPES: Record<Role, readonly string[]> = {
  admin: [USERS_READ_SCOPE, USERS_WRITE_SCOPE, SYSTEM_READ_SCOPE, INSTANCES_WRITE_SCOPE],
  member: [USERS_READ_SCOPE, SYSTEM_READ_SCOPE, INSTANCES_WRITE_SCOPE],
  viewer: [USERS_READ_SCOPE, SYSTEM_READ_SCOPE],
};

/** Scope of the one-time activation / password-reset credential (contract §3). */
export const PASSWORD_SET_SCOPE = 'password:set';
/** Scope of the auth service's own calls into identity. */
export const INTERNAL_IDENTITY_SCOPE = 'internal:identity';

/**
 * Scope of the gateway's own token: only a call carrying it may tell auth who the end user is
 * (client IP, device, user agent) on token issuance and the login page's sign-in.
 */
export const INTERNAL_GATEWAY_SCOPE = 'internal:gateway';

/** The built-in client the gateway authenticates as (client_credentials, secret GATEWAY_CLIENT_SECRET). */
export const GATEWAY_CLIENT_ID = 'gateway';

/** Every scope a holder of `roles` may have: the union of their defaults. */
export function scopesOfRoles(roles: readonly string[]): string[] {
  const scopes = new Set<string>();
  for (const role of roles) if (isRole(role)) for (const scope of ROLE_DEFAULT_SCOPES[role]) scopes.add(scope);
  return [...scopes].sort();
}

const RANK: Record<Role, number> = { admin: 3, member: 2, viewer: 1 };

/**
 * Whether someone holding `held` may grant `wanted`: a role is held when the caller has it or a more
 * powerful one (an admin may create members and viewers; a member may not create admins).
 */
export function mayGrant(held: readonly string[], wanted: readonly string[]): boolean {
  const highest = Math.max(0, ...held.filter(isRole).map((role) => RANK[role]));
  return wanted.every((role) => isRole(role) && RANK[role] <= highest);
}

/** `scope` strings are space-separated (RFC 6749 §3.3); order and repeats do not matter. */
export const parseScope = (scope: string | undefined): string[] => [
  ...new Set((scope ?? '').split(' ').filter((part) => part.length > 0)),
];
