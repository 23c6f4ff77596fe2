import { runInRequestContext } from '@acct/observability';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * Runs everything Fastify and Nest do for a request in that request's context, so every log line
 * about it (hooks, guards, controllers, gRPC calls and the error filter's own line for a 500) carries
 * its `request_id`. Entered in the first onRequest hook; entered again after the body is parsed,
 * because the body arrives on the socket's events, outside the context.
 */
export function runRequestsInContext(fastify: FastifyInstance): void {
  const enter = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) =>
    runInRequestContext({ requestId: request.id }, done);
  fastify.addHook('onRequest', enter);
  fastify.addHook('preValidation', enter);
}
