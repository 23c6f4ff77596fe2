import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

import { DomainError, PROBLEM_CONTENT_TYPE, toProblemDocument } from '@acct/problem';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { sendProblem } from './problem';

/** The rate limit of a request no hook ran for (`RateLimitHook.handle`); it answers 429 itself. */
export type LimitRequest = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * The provider of the `LimitRequest` the problem filter runs for a request Fastify answered without
 * its hooks: rate-limits/ provides it (the rate-limit hook), so http/ needs no feature folder.
 */
export const LIMIT_REQUEST = Symbol('LIMIT_REQUEST');

/**
 * Fastify answers a few requests before any route, hook or filter runs: a path that is not valid
 * percent-encoding and a path parameter longer than the router keeps. Both name no resource, so they
 * are `404 not_found` problem documents like any other unknown path (contract §1). They still count
 * in the `default` group per IP and carry the rate-limit headers: `limit` is the rate-limit hook,
 * known once the app is built.
 */
export const frameworkError =
  (limit: () => LimitRequest | undefined) =>
  (_error: Error, request: FastifyRequest, reply: FastifyReply): void => {
    void reply.header('X-Request-Id', request.id);
    const limited = limit()?.(request, reply) ?? Promise.resolve();
    void limited
      // No limiter answer (it has its own fallback): the refusal below is still sent.
      .catch(() => undefined)
      .then(() => {
        if (!reply.sent) void sendProblem(request, reply, new DomainError('not_found', 'No resource at this path.'));
      });
  };

/** The rate-limit headers an answer carries, and the 429 to answer instead when its bucket is empty. */
export interface PeerLimit {
  headers: Array<[string, string]>;
  refusal?: DomainError;
}

/**
 * The rate limit of a peer whose bytes Node's HTTP parser refused (`RateLimitHook.limitPeer`).
 * `inFlight`: the response of the request the refused bytes came after the headers of (its body),
 * which the rate-limit hook counted when it arrived.
 */
export type LimitPeer = (remoteAddress: string | undefined, inFlight: ServerResponse | undefined) => Promise<PeerLimit>;

/** How long a refused peer's answer waits for its rate limit before it is sent without one. */
const PEER_LIMIT_WAIT_MS = 1000;

/** Sockets whose refusal is being answered: Node reports a parser error again for each later chunk. */
const answering = new WeakSet<Socket>();

/**
 * Where a response keeps its request's id (see `rememberRequestId`): a property of the response
 * itself, not a WeakMap entry, which costs every garbage collection of the young generation.
 */
const REQUEST_ID = Symbol('requestId');
/** Node's response on a socket (`socket._httpMessage`), whether its head was written yet, its request's id. */
type InFlight = ServerResponse & { _headerSent?: boolean; [REQUEST_ID]?: string };

/**
 * Remembers a request's id for `clientError`: when Node's parser refuses the rest of the request (its
 * body too slow or not HTTP), that refusal is the request's answer and carries its id (contract §1:
 * the client's own when it sent a sane one), the one its log lines carry, not a new one.
 */
export function rememberRequestId(request: FastifyRequest, reply: FastifyReply): void {
  (reply.raw as InFlight)[REQUEST_ID] = request.id;
}

/**
 * Node's HTTP parser refuses requests that are not HTTP/1.1 at all (control characters in a header,
 * a bad request line, conflicting Content-Length and Transfer-Encoding, headers over the size limit,
 * a request too slow to arrive). There is no request object to hand to Nest, so the problem document
 * is written to the socket directly, which is then closed, as Node does. Like every answer it counts
 * in the `default` group, per the socket's address (no header was read, so no forwarded one), and
 * carries the rate-limit headers; an empty bucket makes it a 429. Bytes refused after a request's
 * headers (its body too slow, or not HTTP) are that request's: it was counted when it arrived, and
 * the answer carries its decision instead, taking no second token. Without a limiter answer within
 * PEER_LIMIT_WAIT_MS it is sent without them, so a paused socket never waits on a slow dependency.
 */
export const clientError =
  (limit: () => LimitPeer | undefined) =>
  (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed || answering.has(socket)) return;
    // The response of the request on this connection that has not been answered yet, if any.
    const inFlight = (socket as Socket & { _httpMessage?: InFlight | null })._httpMessage ?? undefined;
    // An answer to an earlier request on this connection is already being written: no second one.
    if (inFlight?._headerSent) {
      socket.destroy(error);
      return;
    }
    answering.add(socket);
    socket.pause();
    let timer: NodeJS.Timeout | undefined;
    const limited = Promise.race([
      limit()?.(socket.remoteAddress, inFlight) ?? Promise.resolve(undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), PEER_LIMIT_WAIT_MS))),
    ]);
    void limited
      .catch(() => undefined)
      .then((outcome) => {
        clearTimeout(timer);
        if (socket.writable) {
          const problem = outcome?.refusal ?? problemOfClientError(error.code);
          const requestId = inFlight?.[REQUEST_ID] ?? randomUUID();
          socket.write(rawProblem(problem, outcome?.headers ?? [], requestId));
        }
        socket.destroy(error);
      });
  };

/** A whole HTTP/1.1 answer carrying `problem`, for a socket no response object exists for. */
function rawProblem(problem: DomainError, headers: Array<[string, string]>, requestId: string): string {
  const body = JSON.stringify(toProblemDocument(problem, requestId));
  return [
    `HTTP/1.1 ${problem.status} ${STATUS_TEXT[problem.status] ?? 'Bad Request'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    `X-Request-Id: ${requestId}`,
    ...headers.map(([name, value]) => `${name}: ${value}`),
    ...(problem.options.retryAfter === undefined ? [] : [`Retry-After: ${problem.options.retryAfter}`]),
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
};

/** The `code` a CONNECT request is refused under (see `refuseConnect`). */
export const CONNECT_REFUSED = 'ERR_CONNECT_REFUSED';

/**
 * Node hands a CONNECT request (a tunnel through a proxy, RFC 9110 §9.3.6) to a `connect` listener
 * with the bare socket, and without one closes the connection unanswered. The gateway is no proxy: it
 * is refused as the parser's refusals are (`clientError`): a problem document, counted, connection closed.
 */
export const refuseConnect =
  (limit: () => LimitPeer | undefined) =>
  (_request: IncomingMessage, socket: Socket): void => {
    // Node no longer listens on the socket it handed over: its close with the reason is no crash.
    socket.on('error', () => undefined);
    clientError(limit)(Object.assign(new Error('CONNECT is not supported'), { code: CONNECT_REFUSED }), socket);
  };

export function problemOfClientError(code: string | undefined): DomainError {
  switch (code ?? '') {
    case CONNECT_REFUSED:
      return new DomainError('invalid_request', 'CONNECT is not supported: this server is no proxy.');
    case 'HPE_HEADER_OVERFLOW':
      return new DomainError('invalid_request', 'The request headers are too large.', { status: 431 });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new DomainError('invalid_request', 'The request did not arrive in time.', { status: 408 });
    default:
      return new DomainError('invalid_request', 'The request is not valid HTTP/1.1.');
  }
}
