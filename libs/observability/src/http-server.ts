import { trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import { isDraining } from './shutdown';

/** Latency buckets (seconds) from a cache hit to a slow password hash or a backend deadline. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `2xx`, `4xx`, …: enough to see errors without one series a status code. */
export const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

/**
 * Request rate, errors and latency of a Fastify app, labelled by method, route template (`/v2/users/:id`,
 * never the raw URL, so the series stay bounded; `unmatched` for unknown paths) and status class;
 * plus the requests in flight.
 */
export function instrumentHttp(fastify: FastifyInstance, registry: Registry): void {
  const labelNames = ['method', 'route', 'status_class'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status class.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status class.',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests received and not answered yet.',
    registers: [registry],
  });
  // Callback hooks, not async ones: every request runs them, and an async hook costs a promise each.
  fastify.addHook('onRequest', (request, reply, done) => {
    inFlight.inc();
    // Once a request, whether it was answered or the client went away.
    reply.raw.once('close', () => inFlight.dec());
    // While tracing, the HTTP server span is named after the route template too (`GET /v2/users/:id`).
    const route = request.routeOptions.url;
    const span = route ? trace.getActiveSpan() : undefined;
    span?.setAttribute('http.route', route!).updateName(`${request.method} ${route}`);
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_class: statusClass(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * Once shutdown began, every answer closes its connection: keep-alive clients reconnect (to another
 * instance) instead of waiting on this one, and the server can finish closing.
 */
export function closeConnectionsOnShutdown(fastify: FastifyInstance): void {
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (isDraining()) void reply.header('connection', 'close');
    done(null, payload);
  });
}
