import type { FastifyInstance } from 'fastify';

import { discoveryPaths } from './well-known';

/**
 * What a browser app (a public client of contract §6) calls itself, with `fetch` from its own origin:
 * discovery, the signing keys, the token endpoint (its code exchange and refreshes) and revocation
 * (its sign-out). Without CORS a browser keeps every answer of these from the app. The authorization
 * endpoint is navigated to, never fetched, so it allows no other origin (OAuth 2.0 for Browser-Based
 * Applications: CORS at the token endpoint, never at the authorization endpoint).
 */
export function browserAppPaths(issuer: string): ReadonlySet<string> {
  return new Set([...discoveryPaths(issuer), '/v2/auth/jwks', '/v2/auth/token', '/v2/auth/revoke']);
}

/** Any origin: these requests carry no cookie (a client authenticates in the body or with Basic). */
const ALLOW_ORIGIN = '*';
/** What a client may read of an answer besides the CORS-safelisted headers. */
const EXPOSED_HEADERS = [
  'Retry-After',
  'WWW-Authenticate',
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  // The password grant's device credential (a response header: the token set's fields are fixed).
  'X-Device-Token',
].join(', ');
/**
 * What a browser app may send: its credentials, the body's type, the password grant's device headers,
 * and its own X-Request-Id (contract §1: a client's own id is kept and answered back). A header left
 * out here fails the preflight, and the browser sends nothing: an app that tags its calls with a
 * request id could not exchange a code, refresh or sign out at all.
 */
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Device-Id, X-Device-Token, X-Request-Id';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The request's path without its query: every request asks, so no array is made for it. */
const pathOf = (url: string) => {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
};

/**
 * Every answer of those paths, refusals included, allows any origin to read it. Whether or not the
 * request named an `Origin`: discovery and the keys are `Cache-Control: public`, and a shared cache
 * hands the copy a server-side client fetched to a browser app too (RFC 9111 §4.1; no `Vary: Origin`
 * needed, as the answer is the same for every origin). Runs before the rate limit, so its 429 is
 * readable too.
 */
export function allowBrowserApps(fastify: FastifyInstance, issuer: string): void {
  const paths = browserAppPaths(issuer);
  fastify.addHook('onRequest', (request, reply, done) => {
    if (paths.has(pathOf(request.url))) {
      void reply
        .header('Access-Control-Allow-Origin', ALLOW_ORIGIN)
        .header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    done();
  });
}

/**
 * A CORS preflight of those paths (OPTIONS with `Access-Control-Request-Method`: a JSON body or an
 * Authorization header) is `204` with what they allow; any other OPTIONS stays `405`. Runs after the
 * rate limit: a preflight counts (in the `default` group: no route answers OPTIONS) and carries its headers.
 */
export function answerBrowserAppPreflights(fastify: FastifyInstance, issuer: string): void {
  const paths = browserAppPaths(issuer);
  fastify.addHook('onRequest', (request, reply, done) => {
    const preflight =
      request.method === 'OPTIONS' &&
      request.headers.origin !== undefined &&
      request.headers['access-control-request-method'] !== undefined &&
      paths.has(pathOf(request.url));
    if (!preflight) return done();
    void reply
      .status(204)
      .header('Access-Control-Allow-Methods', 'GET, POST')
      .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
      .header('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS))
      .send();
  });
}
