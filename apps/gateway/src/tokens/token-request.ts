import { DomainError } from '@acct/problem';
import type { FastifyRequest } from 'fastify';

import { hasSeveralAuthorizations, REALM } from '../auth/authenticated-request';
import { FORM_CONTENT_TYPE, isJsonMediaType, isPlainObject, JSON_OR_FORM, mediaTypeOf } from '../http/request-body';

const FIELDS = [
  'grant_type',
  'username',
  'password',
  'scope',
  'mfa_code',
  'client_id',
  'client_secret',
  'refresh_token',
  'code',
  'redirect_uri',
  'code_verifier',
] as const;
export type TokenParameters = Record<(typeof FIELDS)[number], string>;

/**
 * No parameter of a real token request comes near this (passwords are at most 128 characters, tokens
 * and secrets about 43); longer ones are refused here, before they reach the auth service, whose
 * errors may quote them and travel back in gRPC metadata (8 KiB at most).
 */
export const MAX_PARAMETER_LENGTH = 1024;

/** An RFC 6749 §5.2 error: the OAuth `error` member beside the problem members. */
export const oauthError = (
  code: 'invalid_request' | 'invalid_client',
  description: string,
  headers?: Record<string, string>,
) => new DomainError(code, description, { extensions: { error: code, error_description: description }, headers });

/** Basic credentials that cannot be read: RFC 6749 §5.2 asks for 401 with a challenge of the scheme used. */
const malformedBasic = () =>
  oauthError('invalid_client', 'The HTTP Basic credentials are malformed.', {
    'WWW-Authenticate': `Basic realm="${REALM}"`,
  });

/** The parameters of `POST /v2/auth/token` (see `clientRequestParameters`); `grant_type` defaults to password. */
export function tokenParameters(request: FastifyRequest): TokenParameters {
  const parameters = clientRequestParameters(request, FIELDS);
  parameters.grant_type ||= 'password';
  return parameters;
}

const NONE_UNBOUNDED: ReadonlySet<never> = new Set();

/**
 * The parameters of a client's request to the token, revocation or introspection endpoint from a
 * JSON or form body, and client credentials from HTTP Basic (RFC 6749 §2.3.1). Unknown parameters
 * are ignored, as RFC 6749 §3.2 asks; a known one sent twice or not as a string is refused, and so is
 * one longer than MAX_PARAMETER_LENGTH, but those in `unbounded` (bounded by the body's limit only).
 */
export function clientRequestParameters<Field extends string>(
  request: FastifyRequest,
  fields: readonly Field[],
  unbounded: ReadonlySet<Field> = NONE_UNBOUNDED,
): Record<Field | 'client_id' | 'client_secret', string> {
  type Parameters = Record<Field | 'client_id' | 'client_secret', string>;
  const mediaType = mediaTypeOf(request);
  if (mediaType !== FORM_CONTENT_TYPE && !isJsonMediaType(mediaType)) {
    throw new DomainError('unsupported_media_type', JSON_OR_FORM);
  }
  if (!isPlainObject(request.body)) throw new DomainError('malformed_body', 'The request body must be an object.');
  const body = request.body;
  const parameters = {} as Parameters;
  for (const field of new Set<Field | 'client_id' | 'client_secret'>([...fields, 'client_id', 'client_secret'])) {
    const value = body[field];
    if (value !== undefined && typeof value !== 'string') {
      throw oauthError('invalid_request', `${field} must be given once, as a string.`);
    }
    if (typeof value === 'string' && value.length > MAX_PARAMETER_LENGTH && !unbounded.has(field as Field)) {
      throw oauthError('invalid_request', `${field} must be at most ${MAX_PARAMETER_LENGTH} characters.`);
    }
    parameters[field] = value ?? '';
  }
  if (hasSeveralAuthorizations(request)) {
    throw oauthError('invalid_request', 'Send one Authorization header, not several.');
  }
  const basic = basicCredentials(request.headers.authorization);
  if (basic) {
    if (parameters.client_secret) {
      throw oauthError('invalid_request', 'Send client credentials either in the body or with HTTP Basic, not both.');
    }
    if (parameters.client_id && parameters.client_id !== basic.id) {
      throw oauthError('invalid_request', 'client_id differs from the HTTP Basic user.');
    }
    if (basic.id.length > MAX_PARAMETER_LENGTH || basic.secret.length > MAX_PARAMETER_LENGTH) {
      throw malformedBasic();
    }
    parameters.client_id = basic.id;
    parameters.client_secret = basic.secret;
  }
  return parameters;
}

/** The `Basic` scheme (any case) and what follows it after one or more spaces (RFC 7235 §2.1). */
const BASIC = /^Basic(?: +(.*))?$/i;
const BASE64 = /^[A-Za-z0-9+/=]+$/;

/**
 * Client credentials from an `Authorization: Basic` header; undefined for no header or another scheme.
 * Basic credentials that cannot be read are refused, never ignored: the client tried to authenticate.
 */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = header === undefined ? null : BASIC.exec(header);
  if (!match) return undefined;
  const credentials = match[1] ?? '';
  if (!BASE64.test(credentials)) throw malformedBasic();
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw malformedBasic();
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw malformedBasic();
  }
}
