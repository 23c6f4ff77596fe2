import { DomainError } from '@acct/problem';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { sendProblem } from './problem';

/** The scheme and authority of a request target in absolute form, as the router strips them. */
const ABSOLUTE_FORM = /^https?:\/\/.*?\//;

/**
 * Every public route's method and path pattern, so a known path with a wrong method answers 405. A
 * path matches exactly as Fastify's router matches it (no trailing slash, case-sensitive): what the
 * router does not know is 404 here too.
 *
 * A path some route names literally (`/v2/users/me`) is that route's resource, though a parametric
 * route of another method matches it too (`PATCH /v2/users/:id`): its methods are the literal routes'
 * alone, and the router's match of the parametric one is refused (`refusedOn`), as 405. Otherwise
 * `PATCH /v2/users/me` read `me` as a user id (`404 No such user` of a resource `GET` answers) and
 * `POST /v2/users/me`'s `Allow` named methods that then failed so.
 */
export class RouteTable {
  private readonly routes: Array<{ method: string; pattern: RegExp }> = [];
  /** The methods of each path a route names without parameters. */
  private readonly literal = new Map<string, Set<string>>();

  add(method: string | string[], url: string) {
    const pattern = new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}$`);
    // The router answers HEAD wherever it answers GET (Fastify's `exposeHeadRoutes`), so `Allow`
    // names it there (RFC 9110 §9.3.2, §10.2.1); OPTIONS is CORS' preflight alone (`http/cors.ts`).
    for (const one of new Set([method].flat().flatMap((name) => (name === 'GET' ? ['GET', 'HEAD'] : [name])))) {
      if (one === 'OPTIONS') continue;
      this.routes.push({ method: one, pattern });
      if (!url.includes(':') && !url.includes('*'))
        this.literal.set(url, (this.literal.get(url) ?? new Set()).add(one));
    }
  }

  /**
   * Methods allowed on `path`; empty when no route has this path. The path is read as the router
   * reads it: a request target in absolute form by its path (RFC 9112 §3.2.2), percent-encoded
   * characters decoded (RFC 3986 §6.2.2.2: `/v2/%75sers` is `/v2/users`) except reserved ones
   * (`decodeURI`'s rule, the router's too: `%2F` is no separator); a broken escape names no path.
   */
  allowed(path: string): string[] {
    const bare = barePath(path);
    if (bare === undefined) return [];
    const literal = this.literal.get(bare);
    if (literal) return [...literal].sort();
    return [...new Set(this.routes.filter((route) => route.pattern.test(bare)).map((route) => route.method))].sort();
  }

  /**
   * The methods allowed on `path` when the router matched a parametric route of `method` there that
   * a literal route's path shadows (see the class); undefined when the route matched is the path's own.
   */
  refusedOn(method: string, path: string): string[] | undefined {
    const bare = barePath(path);
    const literal = bare === undefined ? undefined : this.literal.get(bare);
    if (!literal || literal.has(method)) return undefined;
    return [...literal].sort();
  }
}

/** `path` as the router reads it (see `allowed`); undefined for a broken escape. */
function barePath(path: string): string | undefined {
  const target = path.startsWith('/') ? path : path.replace(ABSOLUTE_FORM, '/');
  try {
    return decodeURI(target.split(/[?#]/)[0] ?? target);
  } catch {
    return undefined;
  }
}

/**
 * The `onRequest` hook of a parametric route: a request the router matched to it on a path a literal
 * route names (`PATCH /v2/users/me`) is `405` with that path's `Allow` (see `RouteTable`).
 */
export function refuseShadowedPaths(routes: RouteTable) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const allowed = routes.refusedOn(request.method, request.url);
    if (!allowed) return done();
    void sendProblem(
      request,
      reply,
      new DomainError('method_not_allowed', `${request.method} is not allowed here.`, {
        headers: { Allow: allowed.join(', ') },
      }),
    );
  };
}
