import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import pino from 'pino';

import { lineFormat } from './logger';

/** Lines are gathered up to this many bytes (some 15 lines) before one write(2)… */
export const ACCESS_LOG_BUFFER_BYTES = 4096;
/** …and written at the latest this long after they were logged, however quiet the gateway is. */
export const ACCESS_LOG_FLUSH_MS = 250;

/**
 * Where access log lines go by default: stdout, written asynchronously (pino's SonicBoom with
 * `sync: false`), so a request never waits for the write, and in batches: one write per
 * ACCESS_LOG_BUFFER_BYTES or ACCESS_LOG_FLUSH_MS rather than one per request (the per-line write was
 * the gateway's largest self-time item on the read path). `flushSync()` it before the process exits.
 */
export function asyncStdout(): pino.DestinationStream & { flushSync(): void } {
  return pino.destination({
    dest: 1,
    sync: false,
    minLength: ACCESS_LOG_BUFFER_BYTES,
    periodicFlush: ACCESS_LOG_FLUSH_MS,
  });
}

/**
 * One log line per answered request, once it was answered: method, route template (`/v2/users/:id`,
 * `unmatched` for unknown paths; never the raw URL with its ids and query), status, duration, the
 * request id and the client address (`X-Forwarded-For` only from TRUSTED_PROXIES, see Fastify's
 * trustProxy). No headers, no bodies: nothing secret reaches it.
 *
 * Its lines look like every other log line (`lineFormat`), but its logger has no redaction and no
 * request-context mixin: the fields are these seven, none of them secret, and the request id is one of
 * them. With both, the line was a tenth of the gateway's time on `health` (bench/results/profiles.md).
 *
 * `unlogged` names answers that get no line (the gateway's: health probes answered 2xx,
 * apps/gateway/src/health/answered-probe.ts); they are still counted in the metrics.
 */
export function logAccess(
  fastify: FastifyInstance,
  service: string,
  destination: pino.DestinationStream,
  unlogged: (request: FastifyRequest, reply: FastifyReply) => boolean = () => false,
): void {
  const logger = pino(lineFormat(service, 'info'), destination);
  fastify.addHook('onResponse', (request, reply, done) => {
    if (unlogged(request, reply)) return done();
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
    done();
  });
}
