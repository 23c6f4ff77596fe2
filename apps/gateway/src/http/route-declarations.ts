import type { RateLimitGroup } from '@acct/limits';
import { INestApplication, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer, Reflector } from '@nestjs/core';

import { routeAccess } from '../auth/access.decorators';

/**
 * The metadata key of a route's rate-limit group, written by `@RateLimited` (rate-limits/) and read
 * here: it lives in this lower layer so that reading a route's declarations needs no feature folder.
 */
export const RATE_LIMIT_GROUP = 'acct:rate-limit-group';

/** What a controller route declares about itself: who may call it and which bucket it counts in. */
export interface RouteDeclaration {
  /** `UsersController.create` */
  handler: string;
  /** `POST` */
  method: string;
  /** `/v2/users/:id`: the controller's prefix and the route's path, as Nest registers them. */
  path: string;
  isPublic: boolean;
  scope?: string;
  rateLimitGroup?: RateLimitGroup;
}

/** Every route of every controller the app registered, with its declarations. */
export function routeDeclarations(app: INestApplication): RouteDeclaration[] {
  const reflector = new Reflector();
  const routes: RouteDeclaration[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type | null;
      if (!controller) continue;
      const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined].flat();
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (typeof handler !== 'function' || name === 'constructor') continue;
        const requestMethod = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (requestMethod === undefined || paths === undefined) continue;
        const declared = {
          handler: `${controller.name}.${name}`,
          method: RequestMethod[requestMethod],
          ...routeAccess(reflector, handler, controller),
          rateLimitGroup: reflector.getAllAndOverride<RateLimitGroup | undefined>(RATE_LIMIT_GROUP, [
            handler,
            controller,
          ]),
        };
        for (const prefix of prefixes) {
          for (const path of [paths].flat()) routes.push({ ...declared, path: joinPath(prefix ?? '', path) });
        }
      }
    }
  }
  return routes;
}

const joinPath = (...parts: string[]) => `/${parts.join('/').split('/').filter(Boolean).join('/')}`;

/** What is missing from a route's declarations; empty when it is complete. */
export function missingDeclarations(route: RouteDeclaration): string[] {
  const missing: string[] = [];
  if (!route.rateLimitGroup) missing.push('a rate-limit group (@RateLimited)');
  if (!route.isPublic && !route.scope) missing.push('a scope (@RequireScope) or @Public()');
  if (route.isPublic && route.scope) missing.push('either @Public() or @RequireScope, not both');
  return missing;
}

/**
 * Start-up check: every route says which bucket it counts in and who may call it, so a new route
 * cannot silently fall into the `default` group or lose its scope. Throws naming every incomplete route.
 */
export function assertRoutesDeclared(app: INestApplication): void {
  const problems = routeDeclarations(app).flatMap((route) => {
    const missing = missingDeclarations(route);
    return missing.length > 0
      ? [`${route.method} ${route.path} (${route.handler}) needs ${missing.join(' and ')}`]
      : [];
  });
  if (problems.length > 0) throw new Error(`Incomplete route declarations:\n- ${problems.join('\n- ')}`);
}
