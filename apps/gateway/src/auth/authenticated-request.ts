import { Caller } from '@acct/access-token';
import type { FastifyRequest } from 'fastify';

/** What the authenticate hook learnt about a request's bearer token, before anything else runs. */
export interface Authentication {
  /** The verified caller of a valid access token. */
  caller?: Caller;
  /** That token, forwarded to the services (each verifies it again). */
  accessToken?: string;
  /** Why there is no caller: the 401 (or 503) a protected route answers. */
  authFailure?: Error;
}

/** A request to a protected route: the AuthGuard let it through, so it has a caller. */
export interface AuthenticatedRequest extends FastifyRequest {
  caller: Caller;
  accessToken: string;
}

export const REALM = 'account-platform';

/**
 * Whether the request carries more than one `Authorization` field line. Node keeps the first and drops
 * the others, so such a request would be judged on one credential while a proxy in front may have read
 * another; the field is no list (RFC 9110 §11.6.2), a sender must not repeat it (§5.3), and RFC 6750
 * §3.1 and RFC 6749 §5.2 count a repeated credential as a malformed request.
 */
export function hasSeveralAuthorizations(request: FastifyRequest): boolean {
  const lines = request.raw?.rawHeaders ?? [];
  let seen = 0;
  for (let index = 0; index < lines.length; index += 2) {
    if (lines[index].length === 13 && lines[index].toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}
