import { DomainError } from '@acct/problem';
import type { FastifyRequest } from 'fastify';

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
/** Fastify's refusal of a media type it has no parser for (it parses JSON and forms). */
export const JSON_ONLY = 'Send the body as application/json.';
/** What the OAuth endpoints (token, revocation, introspection) read: either media type. */
export const JSON_OR_FORM = `Send the body as application/json or ${FORM_CONTENT_TYPE}.`;
/** What the login page's sign-in form (`POST /v2/auth/authorize`) reads: the form a browser posts. */
export const FORM_ONLY = `Send the form as ${FORM_CONTENT_TYPE}.`;

export function mediaTypeOf(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

export const isJsonMediaType = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body of a JSON-only route: 415 for any other media type, 400 unless it is a JSON object. */
export function jsonObjectBody(request: FastifyRequest): Record<string, unknown> {
  if (!isJsonMediaType(mediaTypeOf(request))) {
    throw new DomainError('unsupported_media_type', 'Send the body as application/json.');
  }
  if (!isPlainObject(request.body)) throw new DomainError('malformed_body', 'The request body must be a JSON object.');
  return request.body;
}
