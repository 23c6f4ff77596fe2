import { bearerToken } from '@acct/access-token';
import type { FastifyRequest } from 'fastify';

import { hasSeveralAuthorizations } from './authenticated-request';

/** A one-time `password:set` token as identity issues it: opaque base64url, not an access token. */
const ONE_TIME_TOKEN = /^[A-Za-z0-9_-]{20,200}$/;

/**
 * The one-time token of a request's `Authorization` header (the activation page's, the reset
 * operation's), read as every bearer credential is (`bearerToken`: the scheme in any letter case, RFC
 * 9110 §11.1); undefined when it holds none, or when the request has several such headers.
 */
export function oneTimeBearerToken(request: FastifyRequest): string | undefined {
  if (hasSeveralAuthorizations(request)) return undefined;
  const token = bearerToken(request.headers.authorization);
  return token !== undefined && ONE_TIME_TOKEN.test(token) ? token : undefined;
}
