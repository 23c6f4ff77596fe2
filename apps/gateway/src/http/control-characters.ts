import { fieldsWithControlCharacters, validationFailed } from '@acct/problem';
import type { FastifyInstance } from 'fastify';

import { withOAuthMembers } from './oauth-members';
import { sendProblem } from './problem';

/**
 * Routes whose backend refuses control characters itself, so the attempt is still recorded: the token
 * endpoint's parameters reach auth, which answers `400 invalid_request` and writes the login audit
 * with the values escaped.
 */
export const REFUSED_BY_BACKEND: ReadonlySet<string> = new Set(['/v2/auth/token']);
/**
 * The login form's fields a person types (`POST /v2/auth/authorize`): auth refuses a control character
 * in them as it does at the token endpoint (audited, not counted), and the page says so in HTML; the
 * form's other fields (the authorization request, CSRF token) are refused here like any other.
 */
const TYPED_BY_PEOPLE = new Map([['/v2/auth/authorize', new Set(['username', 'password', 'mfa_code'])]]);
/**
 * The authorization request (`GET /v2/auth/authorize`): its controller refuses a control character in
 * the query as RFC 6749 §4.1.2.1 asks, with the error page or an `invalid_request` sent back to the
 * client, never a problem the person's browser would show as JSON.
 */
const QUERY_JUDGED_BY_ROUTE: ReadonlySet<string> = new Set(['/v2/auth/authorize']);

/** Whether the route `url` judges the query of a request of `method` (any case) itself. */
const queryJudgedByRoute = (method: string, url: string) =>
  QUERY_JUDGED_BY_ROUTE.has(url) && method.toLowerCase() !== 'post';

/**
 * Whether the route `url` may answer a control character in a request of `method` (any case) with
 * this hook's `400 validation_failed`: not where the backend or the route judges every field it reads.
 */
export const refusesControlCharacters = (method: string, url: string) =>
  !REFUSED_BY_BACKEND.has(url) && !queryJudgedByRoute(method, url);

/**
 * No field of any request (path parameters, query, JSON or form body) may hold a control character
 * (U+0000–U+001F, U+007F–U+009F): `400 validation_failed` naming each such field, after the rate
 * limit and before any controller, so none reaches a backend or a database (Postgres refuses U+0000
 * in text outright).
 */
export function refuseControlCharacters(fastify: FastifyInstance): void {
  // A callback hook, not an async one: every request runs it, and an async hook costs a promise each.
  fastify.addHook('preValidation', (request, reply, done) => {
    // An unknown path stays 404 whatever it holds; the token endpoint's backend judges its own.
    const url = request.routeOptions.url ?? '';
    if (request.is404 || REFUSED_BY_BACKEND.has(url)) return done();
    const typed = request.method === 'POST' ? TYPED_BY_PEOPLE.get(url) : undefined;
    const fields = [
      ...fieldsWithControlCharacters(request.params, 'path'),
      ...(queryJudgedByRoute(request.method, url) ? [] : fieldsWithControlCharacters(request.query, 'query')),
      ...fieldsWithControlCharacters(request.body, '')
        .filter((field) => !typed?.has(field))
        .map((field) => (field === '(value)' ? '(body)' : field)),
    ];
    if (fields.length === 0) return done();
    const refusal = validationFailed(
      fields.map((field) => ({ field, message: 'must not contain control characters' })),
      'The request has fields with control characters.',
    );
    // Revocation's and introspection's refusals carry OAuth's `error` too (RFC 7009 §2.2.1, RFC 7662 §2.3).
    void sendProblem(request, reply, withOAuthMembers(refusal, request));
  });
}
