import type { IncomingMessage } from 'node:http';

import {
  acceptRequestId,
  asyncStdout,
  closeConnectionsOnShutdown,
  createLogger,
  createMetricsRegistry,
  instrumentHttp,
  logAccess,
  NestPinoLogger,
  OpsModule,
} from '@acct/observability';
import { DomainError } from '@acct/problem';
import { RevocationsReadiness } from '@acct/revocation';
import fastifyCookie from '@fastify/cookie';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';

import { AuthenticateHook } from './auth/authenticate.hook';
import { GatewayConfig } from './config';
import { GatewayModule } from './gateway.module';
import { answeredProbe } from './health/answered-probe';
import { HealthReporter } from './health/health-reporter';
import { trackArrivingRequests } from './http/arriving-requests';
import { refuseControlCharacters } from './http/control-characters';
import { allowBrowserApps, answerBrowserAppPreflights } from './http/cors';
import {
  clientError,
  frameworkError,
  LimitPeer,
  LimitRequest,
  refuseConnect,
  rememberRequestId,
} from './http/framework-errors';
import { withOAuthMembers } from './http/oauth-members';
import { sendProblem } from './http/problem';
import { contentCodingRefusal, parseJsonBodies, refuseBodiesNotUtf8 } from './http/request-body';
import { runRequestsInContext } from './http/request-context';
import { assertRoutesDeclared, routeDeclarations } from './http/route-declarations';
import { refuseShadowedPaths, RouteTable } from './http/route-table';
import { trustedProxies } from './http/trusted-proxies';
import { discoveryPaths } from './http/well-known';
import { DiscoveryController } from './oauth/discovery.controller';
import { buildOpenApiDocument } from './openapi/openapi-document';
import { serveApiDocs } from './openapi/serve-api-docs';
import { RateLimitHook } from './rate-limits/rate-limit.hook';

/** `application/<subtype>+json`, with or without parameters (what `isJsonMediaType` accepts besides application/json). */
const STRUCTURED_JSON = /^application\/[^\s;/]+\+json(?:;|$)/;

/** Contract §1: bodies over 64 KiB are refused with 413. */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface RunningGateway {
  app: NestFastifyApplication;
  ops: NestFastifyApplication;
  logger: Logger;
  /**
   * Stops accepting connections and resolves when every request in flight has been answered; a
   * request still arriving after REQUEST_TIMEOUT_MS or half of `graceMs` (the shutdown's) is `408`.
   */
  drain(graceMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The public HTTP app on GATEWAY_PORT and its ops app (/livez, /readyz, /metrics) on GATEWAY_OPS_PORT. */
export async function startGateway(config: GatewayConfig): Promise<RunningGateway> {
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const registry = createMetricsRegistry('gateway');
  const routes = new RouteTable();
  // The rate-limit hook, for requests Fastify refuses before any hook: known once the app is built.
  const late: { limitRequest?: LimitRequest; limitPeer?: LimitPeer } = {};
  // Set once drain began: a request that still arrives then is refused (see the hook below).
  let closing = false;

  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: false,
    // X-Forwarded-For is believed only from these proxies; otherwise the socket's address is the client.
    trustProxy: trustedProxies(config.TRUSTED_PROXIES),
    genReqId: (request: IncomingMessage) => acceptRequestId(request.headers['x-request-id']),
    // Fastify's own refusal while closing is bare JSON without the request id: ours is below.
    return503OnClosing: false,
    // Requests Fastify or Node refuse before any route runs are problem documents too (contract §1).
    frameworkErrors: frameworkError(() => late.limitRequest),
    clientErrorHandler: clientError(() => late.limitPeer),
    // Fastify's default is none: a client that stopped sending mid-body held its connection for ever.
    // Node applies it only with a headers timeout no longer than it, and looks for late requests every
    // connectionsCheckingInterval (30 s unless set).
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    http: {
      // Node's own 400 for an HTTP/1.1 request without Host is bare: refused below as a problem instead.
      requireHostHeader: false,
      headersTimeout: config.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(config.REQUEST_TIMEOUT_MS / 4))),
    },
  });
  const fastify = adapter.getInstance();
  const arriving = trackArrivingRequests(fastify.server);
  // An `Expect` other than 100-continue may be ignored (RFC 9110 §10.1.1). Node's own answer to one is
  // a bare 417 without a problem document, request id or rate-limit headers (contract §1, §2): handled
  // as any request instead, its route answers.
  fastify.server.on('checkExpectation', (request, response) => fastify.server.emit('request', request, response));
  // `Expect: 100-continue` asks whether to send the body (RFC 9110 §10.1.1). Node said yes to every
  // one, then Fastify refused a Content-Length over the limit (413) and closed the connection: the
  // client sent the whole body into it and could lose the 413 to a reset. Such a one is not asked for.
  fastify.server.on('checkContinue', (request, response) => {
    if (!(Number(request.headers['content-length']) > BODY_LIMIT_BYTES)) response.writeContinue();
    fastify.server.emit('request', request, response);
  });
  // A CONNECT request is answered, not dropped unanswered as Node does (framework-errors.ts).
  fastify.server.on(
    'connect',
    refuseConnect(() => late.limitPeer),
  );
  // First: every later hook, the controllers and the error filter log with the request's id.
  runRequestsInContext(fastify);
  instrumentHttp(fastify, registry);
  const accessLog = config.ACCESS_LOG ? asyncStdout() : undefined;
  if (accessLog) logAccess(fastify, 'gateway', accessLog, answeredProbe);
  closeConnectionsOnShutdown(fastify);
  fastify.addHook('onRoute', (route) => {
    // Plain Fastify routes (the API docs) declare their group in their config like controllers do.
    if (!route.config?.rateLimitGroup)
      throw new Error(`${String(route.method)} ${route.url} declares no rate-limit group`);
    routes.add(route.method, route.url);
    // `PATCH /v2/users/:id` also matches `/v2/users/me`, a resource of its own: 405 there (route-table.ts).
    if (route.url.includes(':')) route.onRequest = [route.onRequest ?? [], refuseShadowedPaths(routes)].flat();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('X-Request-Id', request.id);
    rememberRequestId(request, reply);
    done();
  });
  // A browser app's own calls (discovery, JWKS, token, revocation) are readable from its origin.
  allowBrowserApps(fastify, config.TOKEN_ISSUER);
  // Only JSON is a body; everything else is 415 (the token endpoint adds form encoding itself).
  fastify.removeContentTypeParser('text/plain');
  // Nest's form parser, which keeps the bytes as `rawBody` (they must be UTF-8, see below); routes other
  // than the token endpoint refuse forms (415). Registered now, so that Nest registers none at start-up
  // and the JSON parser is ours: application/json and any structured `+json` type (RFC 6839;
  // `application/merge-patch+json` for PATCH, RFC 7396), which `jsonObjectBody` accepts.
  adapter.registerParserMiddleware(undefined, true);
  fastify.removeContentTypeParser('application/json');
  parseJsonBodies(fastify, ['application/json', STRUCTURED_JSON], BODY_LIMIT_BYTES);

  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.forRoot(config, routes, registry),
    adapter,
    {
      logger: new NestPinoLogger(logger),
    },
  );
  // Every controller route says who may call it and which bucket it counts in, or the gateway stops here.
  assertRoutesDeclared(app);
  // How a request flows (README): authenticate → rate limit → guard → controller → gRPC backend.
  const authenticate = app.get(AuthenticateHook);
  // RFC 8414 §3.1: an issuer with a path has its metadata at that path after the well-known one too.
  const issuerDiscoveryPath = discoveryPaths(config.TOKEN_ISSUER)[1];
  authenticate.tokenlessRoutes([
    ...routeDeclarations(app).filter((route) => route.isPublic),
    ...(issuerDiscoveryPath ? [{ method: 'GET', path: issuerDiscoveryPath }] : []),
  ]);
  // Cookies for the login page's CSRF nonce (oauth/authorize.controller.ts); nothing else uses them.
  await app.register(fastifyCookie);
  const rateLimits = app.get(RateLimitHook);
  fastify.addHook('onRequest', (request, reply) => authenticate.handle(request, reply));
  fastify.addHook('onRequest', (request, reply) => rateLimits.handle(request, reply));
  late.limitRequest = (request, reply) => rateLimits.handle(request, reply);
  late.limitPeer = (address, inFlight) => rateLimits.limitPeer(address, inFlight);
  // A request that arrives on a connection still open while the gateway drains (its headers were on
  // their way, or it was pipelined) is refused as contract §1's 503, with its request id, the
  // rate-limit headers and Retry-After; Fastify adds `Connection: close`.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    void sendProblem(
      request,
      reply,
      new DomainError('service_unavailable', 'This gateway instance is shutting down; retry.', { retryAfter: 1 }),
    );
  });
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is 400, closing the connection as Node does;
  // counted and with the rate-limit headers like every refusal. In the same hook, a body in a content
  // coding is 415 (contentCodingRefusal).
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return void sendProblem(
        request,
        reply.header('Connection', 'close'),
        new DomainError('invalid_request', 'An HTTP/1.1 request needs a Host header.'),
      );
    }
    const coded = contentCodingRefusal(request);
    if (coded) return void sendProblem(request, reply, withOAuthMembers(coded, request));
    done();
  });
  // After the rate limit: a browser app's CORS preflight counts and carries the rate-limit headers.
  answerBrowserAppPreflights(fastify, config.TOKEN_ISSUER);
  refuseBodiesNotUtf8(fastify);
  refuseControlCharacters(fastify);
  // GET /v2/openapi.json and /docs: generated from the controllers above (apps/gateway/src/openapi).
  serveApiDocs(app, buildOpenApiDocument(app, config.TOKEN_ISSUER));
  if (issuerDiscoveryPath) {
    const discovery = app.get(DiscoveryController);
    fastify.get(issuerDiscoveryPath, { config: { rateLimitGroup: 'default' } }, (request, reply) =>
      discovery.metadata(request, reply),
    );
  }
  await app.listen(config.GATEWAY_PORT, config.BIND_HOST);

  // The ops port is an app of its own: it gets the readiness checks of the public app as values. The
  // revocation set is one: until it was read once, every token is refused (503), as in every service.
  const reporter = app.get(HealthReporter);
  const revocations = app.get(RevocationsReadiness);
  @Module({
    providers: [
      { provide: HealthReporter, useValue: reporter },
      { provide: RevocationsReadiness, useValue: revocations },
    ],
    exports: [HealthReporter, RevocationsReadiness],
  })
  class GatewayReadinessModule {}
  @Module({
    imports: [
      OpsModule.forRoot({
        registry,
        readiness: [HealthReporter, RevocationsReadiness],
        imports: [GatewayReadinessModule],
      }),
    ],
  })
  class GatewayOpsModule {}
  const ops = await NestFactory.create<NestFastifyApplication>(GatewayOpsModule, new FastifyAdapter(), {
    logger: new NestPinoLogger(logger),
  });
  await ops.listen(config.GATEWAY_OPS_PORT, config.BIND_HOST);
  logger.info({ port: config.GATEWAY_PORT, ops_port: config.GATEWAY_OPS_PORT }, 'gateway started');

  return {
    app,
    ops,
    logger,
    // Fastify's close: the listener closes, idle keep-alive connections too, requests in flight finish
    // (a request arriving on a busy connection meanwhile gets 503 with `Connection: close`). Node no
    // longer times out requests once its server closes: a client that stopped sending would hold the
    // drain until the grace ran out (exit 1, nothing closed), so those still arriving are ended then.
    drain: (graceMs) => {
      closing = true;
      const timer = setTimeout(() => arriving.end(), Math.min(config.REQUEST_TIMEOUT_MS, graceMs / 2));
      return fastify.close().finally(() => clearTimeout(timer));
    },
    async close() {
      await app.close();
      await ops.close();
      accessLog?.flushSync();
    },
  };
}
