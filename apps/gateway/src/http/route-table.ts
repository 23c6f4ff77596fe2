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

  /** Methods allowed on `path`; empty when no route has this path. */
  allowed(path: string): string[] {
    const bare = path.split('?')[0] ?? path;
    return [...new Set(this.routes.filter((route) => route.pattern.test(bare)).map((route) => route.method))].sort();
  }
}
