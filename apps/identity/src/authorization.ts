import { Caller, hasScope } from '@acct/access-token';
import { DomainError } from '@acct/problem';

/** The first line of every use case: the caller's token must carry `scope` (RFC 6750 §3.1). */
export function requireScope(caller: Caller, scope: string): void {
  if (hasScope(caller, scope)) return;
  throw new DomainError('insufficient_scope', `This operation needs the scope ${scope}.`, {
    headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  });
}
