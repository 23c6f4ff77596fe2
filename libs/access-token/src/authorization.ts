import { DomainError } from '@acct/problem';

import { Caller } from './caller';
import { Role } from './scopes';

export interface ScopeCheckOptions {
  /** The `realm` of the `WWW-Authenticate` challenge (the gateway names its realm). */
  realm?: string;
}

/**
 * The first line of every use case (and the gateway's first gate): the caller's token must carry
 * `scope`, else 403 `insufficient_scope` with the RFC 6750 §3 challenge naming the scope.
 */
export function requireScope(caller: Caller, scope: string, options: ScopeCheckOptions = {}): void {
  if (caller.scopes.has(scope)) return;
  const realm = options.realm ? `realm="${options.realm}", ` : '';
  throw new DomainError('insufficient_scope', `This operation needs the scope ${scope}.`, {
    headers: { 'WWW-Authenticate': `Bearer ${realm}error="insufficient_scope", scope="${scope}"` },
  });
}

/**
 * The caller must hold `role`, as its access token says (`caller.roles`: the user's roles when the
 * token was issued, or a client's configured roles). This is the one way a service reads roles; the
 * only exception is granting roles, judged by `mayGrant` against the roles identity holds now.
 */
export function requireRole(caller: Caller, role: Role, detail = `Only ${role}s may do this.`): void {
  if (caller.roles.includes(role)) return;
  throw new DomainError('forbidden', detail);
}

/**
 * Whether `userId` (a path's `{id}`) names the calling user itself: `me`, or its own id in any letter
 * case (identity reads a UUID in any case, so an id in capitals is the same user).
 */
export const namesCaller = (caller: Caller, userId: string): boolean =>
  caller.kind === 'user' && (userId === 'me' || userId.toLowerCase() === caller.subject.toLowerCase());

/** Only users, not clients acting for themselves (client_credentials tokens). */
export function requireUser(caller: Caller, detail = 'Only users can do this.'): void {
  if (caller.kind !== 'user') throw new DomainError('forbidden', detail);
}
