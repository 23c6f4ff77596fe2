import { OAUTH_GROUP } from '@acct/limits';
import { DomainError, ErrorCode } from '@acct/problem';
import type { FastifyRequest } from 'fastify';

import { FORM_ONLY, JSON_ONLY, JSON_OR_FORM } from './request-body';

/**
 * Refusals of a request the endpoint could not read: RFC 6749 §5.2 counts them as `invalid_request`
 * (a body that is not JSON, not an object, too large or of another media type; a parameter holding a
 * control character, refused before the endpoint runs).
 */
const UNREADABLE_REQUEST: ReadonlySet<ErrorCode> = new Set([
  'malformed_body',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
]);

/**
 * The OAuth endpoints whose body is a form only: the login page's sign-in form (its POST; the page's
 * GET reads no body), which refuses a JSON body itself with these words (AuthorizeController.signIn).
 */
const FORM_ONLY_ROUTES: ReadonlySet<string> = new Set(['/v2/auth/authorize']);

/**
 * The token endpoint's errors carry RFC 6749 §5.2's `error` and `error_description` beside the problem
 * members (contract §4; so do the other OAuth endpoints', as their 429 does, and RFC 7009 §2.2.1 and
 * RFC 7662 §2.3 ask the same of revocation and introspection), also the refusals of a request no
 * OAuth code names: a body that is not JSON, not an object, too large or of another media type, or a
 * parameter holding a control character, is "otherwise malformed", `invalid_request`. A refused
 * media type names what the endpoint reads (Fastify refuses one it has no parser for before the
 * endpoint runs): JSON or a form (token, revocation, introspection), a form only (the sign-in form).
 */
export function withOAuthMembers(error: DomainError, request: FastifyRequest): DomainError {
  const group = request.routeOptions?.config?.rateLimitGroup;
  if (group !== OAUTH_GROUP || !UNREADABLE_REQUEST.has(error.code) || error.options.extensions?.error) return error;
  // Only Fastify's generic refusal is reworded: an endpoint's own stands.
  const readable = FORM_ONLY_ROUTES.has(request.routeOptions?.url ?? '') ? FORM_ONLY : JSON_OR_FORM;
  const detail = error.code === 'unsupported_media_type' && error.detail === JSON_ONLY ? readable : error.detail;
  return new DomainError(error.code, detail, {
    ...error.options,
    extensions: { ...error.options.extensions, error: 'invalid_request', error_description: detail },
  });
}
