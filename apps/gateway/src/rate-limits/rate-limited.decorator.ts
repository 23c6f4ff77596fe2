import type { RateLimitGroup } from '@acct/limits';
import { applyDecorators, SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';

import { RATE_LIMIT_GROUP } from '../http/route-declarations';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The endpoint group (contract §2) the route's requests are counted in: see `@RateLimited`. */
    rateLimitGroup?: RateLimitGroup;
  }
}

/**
 * The endpoint group (contract §2) whose bucket a route's requests take a token from. Every route
 * declares one next to its access (`@RequireScope` or `@Public`); the gateway refuses to start
 * otherwise (`http/route-declarations.ts`). The rate-limit hook reads it from the Fastify route's
 * config, which it knows before any Nest code runs; requests that match no route count in `default`.
 */
export const RateLimited = (group: RateLimitGroup) =>
  applyDecorators(SetMetadata(RATE_LIMIT_GROUP, group), RouteConfig({ rateLimitGroup: group }));
