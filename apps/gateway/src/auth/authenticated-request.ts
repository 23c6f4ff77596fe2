import { Caller } from '@acct/access-token';
import type { FastifyRequest } from 'fastify';

/** A request whose bearer token the AuthGuard verified. */
export interface AuthenticatedRequest extends FastifyRequest {
  caller: Caller;
  accessToken: string;
}

export const REALM = 'account-platform';
