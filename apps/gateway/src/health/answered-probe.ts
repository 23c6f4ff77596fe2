import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A health probe the gateway answered 2xx, which gets no access log line. Kubernetes and load
 * balancers ask every instance every few seconds, and such a line said nothing the metrics
 * (`http_requests_total` by route and status class) do not; writing it was a quarter of the gateway's
 * CPU per health request (issue 15). A probe answered 429, 503 or anything else is logged like every
 * other request.
 */
export const answeredProbe = (request: FastifyRequest, reply: FastifyReply): boolean =>
  reply.statusCode < 300 && request.routeOptions.config?.rateLimitGroup === 'system.health';
