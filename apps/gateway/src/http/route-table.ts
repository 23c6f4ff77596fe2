/** The scheme and authority of a request target in absolute form, as the router strips them. */
const ABSOLUTE_FORM = /^https?:\/\/.*?\//;

/**
 * Every public route's method and path pattern, so a known path with a wrong method answers 405. A
 * path matches exactly as Fastify's router matches it (no trailing slash, case-sensitive): what the
 * router does not know is 404 here too.
 */
export class RouteTable {
  private readonly routes: Array<{ method: string; pattern: RegExp }> = [];

  add(method: string | string[], url: string) {
    const pattern = new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}$`);
    for (const one of [method].flat()) {
      if (one !== 'HEAD' && one !== 'OPTIONS') this.routes.push({ method: one, pattern });
    }
  }

  /**
   * Methods allowed on `path`; empty when no route has this path. The path is read as the router
   * reads it: a request target in absolute form by its path (RFC 9112 §3.2.2), percent-encoded
   * characters decoded (RFC 3986 §6.2.2.2: `/v2/%75sers` is `/v2/users`) except reserved ones
   * (`decodeURI`'s rule, the router's too: `%2F` is no separator); a broken escape names no path.
   */
  allowed(path: string): string[] {
    const target = path.startsWith('/') ? path : path.replace(ABSOLUTE_FORM, '/');
    let bare: string;
    try {
      bare = decodeURI(target.split(/[?#]/)[0] ?? target);
    } catch {
      return [];
    }
    return [...new Set(this.routes.filter((route) => route.pattern.test(bare)).map((route) => route.method))].sort();
  }
}
