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
