import { isUtf8 } from 'node:buffer';

import { DomainError } from '@acct/problem';
import type { RawBodyRequest } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';

import { parseOrFail } from './validation';

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
/** Fastify's refusal of a media type it has no parser for (it parses JSON and forms). */
export const JSON_ONLY = 'Send the body as application/json.';
/** What the OAuth endpoints (token, revocation, introspection) read: either media type. */
export const JSON_OR_FORM = `Send the body as application/json or ${FORM_CONTENT_TYPE}.`;
/** What the login page's sign-in form (`POST /v2/auth/authorize`) reads: the form a browser posts. */
export const FORM_ONLY = `Send the form as ${FORM_CONTENT_TYPE}.`;

/**
 * The patch formats PATCH takes (RFC 5789 §3.1): a JSON merge patch (RFC 7396), under its own media
 * type or as plain JSON. Another `+json` type names another format (a JSON Patch, RFC 6902, is an
 * array of operations): 415 with this list, not the `400 malformed_body` of a broken merge patch.
 */
export const ACCEPT_PATCH = 'application/merge-patch+json, application/json';
const PATCH_FORMATS = new Set(ACCEPT_PATCH.split(', '));

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

/** The body of an operation that takes none: no field at all. */
const NO_FIELDS = z.object({}).strict();

/**
 * An operation that takes no body (disable, enable, delete, ending sessions, unlocking): none, or an
 * empty JSON object, runs it. Anything else is refused as any route's body is (contract §1): a field is
 * `400 validation_failed` (unknown fields are rejected), a body that is not an object `malformed_body`.
 * Otherwise a client's `{"reason": …}` or `{"except_current": true}` was dropped without a word and the
 * operation went on as if it had not been sent.
 */
export function refuseBody(request: FastifyRequest): void {
  if (request.body !== undefined) parseOrFail(NO_FIELDS, jsonObjectBody(request));
}

/**
 * The JSON parser of `mediaTypes`: a JSON value, its bytes kept as `rawBody` (for `refuseBodiesNotUtf8`).
 * A request without content has no body, whatever Content-Type it names (a client that sends
 * `application/json` on every request): a route that takes none, or takes one optionally (the reset
 * operation), runs; one that needs one refuses it as `jsonObjectBody` does (400 malformed_body).
 * An object naming a member twice is `400 malformed_body` too (see `repeatedMemberName`).
 * A PATCH in a format other than `ACCEPT_PATCH` is 415 with `Accept-Patch` (RFC 5789 §2.2).
 */
export function parseJsonBodies(fastify: FastifyInstance, mediaTypes: Array<string | RegExp>, bodyLimit: number) {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  for (const mediaType of mediaTypes) {
    fastify.addContentTypeParser(mediaType, { parseAs: 'buffer', bodyLimit }, (request, body: Buffer, done) => {
      (request as RawBodyRequest<FastifyRequest>).rawBody = body;
      if (body.length === 0) return done(null, undefined);
      if (request.method === 'PATCH' && !PATCH_FORMATS.has(mediaTypeOf(request))) {
        const detail = `Send the patch as ${ACCEPT_PATCH.replace(', ', ' or ')}.`;
        return done(new DomainError('unsupported_media_type', detail, { headers: { 'Accept-Patch': ACCEPT_PATCH } }));
      }
      const text = body.toString('utf8');
      void parseJson(request, text, (error, value) => {
        const repeated = error ? undefined : repeatedMemberName(text);
        if (repeated === undefined) return done(error, value);
        const member = repeated.length <= 64 ? `the member ${JSON.stringify(repeated)}` : 'a member';
        done(new DomainError('malformed_body', `The request body names ${member} twice.`));
      });
    });
  }
}

/**
 * The first member name an object of `json` (text that parsed as JSON) holds more than once, escapes
 * read (`"a"` and `"\u0061"` are one name). RFC 8259 §4 leaves such an object's meaning to each parser
 * (I-JSON, RFC 7493 §2.3, forbids it): `JSON.parse` keeps the last, a proxy or WAF in front may have
 * read the first, and a token request sent twice a parameter is refused as a form (RFC 6749 §3.2).
 */
export function repeatedMemberName(json: string): string | undefined {
  // The open objects' names so far, innermost last; `undefined` for an open array.
  const open: Array<Set<string> | undefined> = [];
  let atName = false;
  for (let index = 0; index < json.length; index += 1) {
    const char = json[index];
    if (char === '"') {
      let end = index + 1;
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      if (atName) {
        const name = JSON.parse(json.slice(index, end + 1)) as string;
        const names = open[open.length - 1]!;
        if (names.has(name)) return name;
        names.add(name);
        atName = false;
      }
      index = end;
    } else if (char === '{') {
      open.push(new Set());
      atName = true;
    } else if (char === '[') {
      open.push(undefined);
    } else if (char === '}' || char === ']') {
      open.pop();
    } else if (char === ',') {
      atName = open[open.length - 1] !== undefined;
    }
  }
  return undefined;
}

/**
 * RFC 8259 §8.1: JSON exchanged between systems is UTF-8 (and a form is read as UTF-8 too, RFC 6749
 * Appendix B). A body whose bytes are not is `400 malformed_body`, before any route reads it: the
 * parsers decode each invalid byte as U+FFFD, so a Latin-1 client's `Zoë` was stored as `Zo\uFFFD` and
 * its password as the hash of another text. A form's bytes are ASCII (percent-encoded), so it is the
 * octets its escapes name that must be UTF-8: `password=Zo%EB` was judged as another password. Reads
 * the bytes the parsers keep (`rawBody`); an unknown path stays 404.
 */
export function refuseBodiesNotUtf8(fastify: FastifyInstance): void {
  // A callback hook, not an async one, like the control-character check after it.
  fastify.addHook('preValidation', (request, _reply, done) => {
    const raw = (request as RawBodyRequest<FastifyRequest>).rawBody;
    if (request.is404 || raw === undefined || (isUtf8(raw) && !hasEscapesNotUtf8(request, raw))) return done();
    done(new DomainError('malformed_body', 'The request body is not UTF-8 text.'));
  });
}

/**
 * Whether a form's percent-escapes name octets that are not UTF-8. Decoded whole: its `&` and `=` are
 * ASCII, inside no multi-byte UTF-8 sequence, so the whole is UTF-8 exactly when every name and value is.
 */
function hasEscapesNotUtf8(request: FastifyRequest, raw: Buffer): boolean {
  if (mediaTypeOf(request) !== FORM_CONTENT_TYPE || !raw.includes(0x25)) return false;
  const octets = raw
    .toString('latin1')
    .replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return !isUtf8(Buffer.from(octets, 'latin1'));
}

/**
 * RFC 9110 §8.4.1: the gateway decodes no content coding, so a body in one (`Content-Encoding: gzip`,
 * `br`, …) is `415 unsupported_media_type` with `Accept-Encoding: identity` (§15.5.16), before any
 * parser reads it. Fastify ignores the header: a compressed JSON body was refused as not being JSON
 * (`400 malformed_body`), and one labelled `br` whose bytes happened to be JSON was used as if it had
 * no coding at all, while a proxy in front that decodes it read another request. `identity` is no
 * coding; a request without content, a GET or HEAD (whose content Fastify never reads) or a request to
 * an unknown path (404) is left alone. Judged in an `onRequest` hook the gateway runs anyway (after the
 * rate limit): a hook of its own cost every request, GETs included, some microseconds (bench).
 */
export function contentCodingRefusal(request: FastifyRequest): DomainError | undefined {
  // Nearly every request names no coding: nothing else is looked at then.
  const header = request.headers['content-encoding'];
  if (header === undefined) return undefined;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const hasContent =
    request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  const bodiless = request.method === 'GET' || request.method === 'HEAD';
  if (codings.length === 0 || !hasContent || bodiless || request.is404) return undefined;
  return new DomainError(
    'unsupported_media_type',
    `Send the body without a content coding (not ${codings.join(', ')}).`,
    {
      headers: { 'Accept-Encoding': 'identity' },
    },
  );
}
