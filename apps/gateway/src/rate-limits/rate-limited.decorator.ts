import type { RateLimitGroup } from '@acct/limits';
import type { DomainError } from '@acct/problem';
import { applyDecorators, SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';

import { RATE_LIMIT_GROUP } from '../http/route-declarations';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The endpoint group (contract §2) the route's requests are counted in: see `@RateLimited`. */
    rateLimitGroup?: RateLimitGroup;
    /** The route answers its own requests' rate-limit refusals (`rateLimitRefusalOf`): see `@RateLimited`. */
    rateLimitRefusedByRoute?: boolean;
  }
}

/** The refusals the rate-limit hook left to their route to answer, by request. */
const refusedByRoute = new WeakMap<FastifyRequest, DomainError>();

/** For the rate-limit hook: `request` is refused (`429`), and its route answers that itself. */
export function leaveRefusalToRoute(request: FastifyRequest, refusal: DomainError): void {
  refusedByRoute.set(request, refusal);
}

/**
 * The rate-limit refusal of a request to a route declared with `refusedByRoute`: when there is one,
 * the route must answer it (429, `Retry-After`) without calling any backend.
 */
export const rateLimitRefusalOf = (request: FastifyRequest): DomainError | undefined => refusedByRoute.get(request);

/**
 * The endpoint group (contract §2) whose bucket a route's requests take a token from. Every route
 * declares one next to its access (`@RequireScope` or `@Public`); the gateway refuses to start
 * otherwise (`http/route-declarations.ts`). The rate-limit hook reads it from the Fastify route's
 * config, which it knows before any Nest code runs; requests that match no route count in `default`.
 * `refusedByRoute`: the hook does not answer a refused request itself but leaves it to the route
 * (`rateLimitRefusalOf`), for a page a person's browser shows (the login page), never a JSON problem.
 */
export const RateLimited = (group: RateLimitGroup, options: { refusedByRoute?: boolean } = {}) =>
  applyDecorators(
    SetMetadata(RATE_LIMIT_GROUP, group),
    RouteConfig({ rateLimitGroup: group, ...(options.refusedByRoute ? { rateLimitRefusedByRoute: true } : {}) }),
  );
