import type { FastifyInstance } from 'fastify';
import pino, { Logger } from 'pino';

/**
 * Where access log lines go by default: stdout, written asynchronously (pino's SonicBoom with
 * `sync: false`), so a request never waits for the write. `flushSync()` it before the process exits.
 */
export function asyncStdout(): pino.DestinationStream & { flushSync(): void } {
  return pino.destination({ dest: 1, sync: false });
}

/**
 * One log line per answered request, once it was answered: method, route template (`/v2/users/:id`,
 * `unmatched` for unknown paths; never the raw URL with its ids and query), status, duration, the
 * request id and the client address (`X-Forwarded-For` only from TRUSTED_PROXIES, see Fastify's
 * trustProxy). No headers, no bodies: nothing secret reaches it.
 */
export function logAccess(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    logger.info(
      {
        kind: 'access',
        method: request.method,
        route,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
        request_id: request.id,
        client_address: request.ip,
      },
      `${request.method} ${route} ${reply.statusCode}`,
    );
  });
}
