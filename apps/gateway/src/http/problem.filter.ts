import { DomainError } from '@acct/problem';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { fastifyErrorToDomainError } from './fastify-errors';
import { LIMIT_REQUEST, LimitRequest } from './framework-errors';
import { withOAuthMembers } from './oauth-members';
import { sendProblem } from './problem';
import { JSON_ONLY } from './request-body';
import { RouteTable } from './route-table';

const PARSER_FAILURES: Record<number, () => DomainError> = {
  400: () => new DomainError('malformed_body', 'The request body is not valid JSON.'),
  413: () => new DomainError('payload_too_large', 'The request body is larger than 64 KiB.'),
  415: () => new DomainError('unsupported_media_type', JSON_ONLY),
};

/** Every error leaves the gateway as problem+json with a code and the request id. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  constructor(
    private readonly routes: RouteTable,
    private readonly moduleRef: ModuleRef,
  ) {}

  async catch(exception: unknown, host: ArgumentsHost) {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = this.toDomainError(exception, request);
    // A request Fastify answered without its hooks (a path its 404 router cannot decode) still counts
    // in the `default` group and carries the rate-limit headers; the limiter may answer 429 itself.
    if (!reply.hasHeader('X-RateLimit-Limit')) {
      try {
        await this.moduleRef.get<LimitRequest>(LIMIT_REQUEST, { strict: false })(request, reply);
      } catch {
        // No limiter here (or it failed): the problem is still sent.
      }
      if (reply.sent) return reply;
    }
    return sendProblem(request, reply, withOAuthMembers(error, request));
  }

  toDomainError(exception: unknown, request: FastifyRequest): DomainError {
    if (exception instanceof DomainError) return exception;
    // An unknown path or method is answered as such, even when its body failed to parse first.
    const allowed = this.routes.allowed(request.url);
    const routed = allowed.includes(request.method);
    if (!routed && allowed.length > 0) {
      return new DomainError('method_not_allowed', `${request.method} is not allowed here.`, {
        headers: { Allow: allowed.join(', ') },
      });
    }
    if (!routed) return new DomainError('not_found', `No resource at ${request.url.split('?')[0]}.`);
    const fromFastify = fastifyErrorToDomainError(exception as { code?: string });
    if (fromFastify) return fromFastify;
    // Nest hands Fastify's body-parsing failures over as HttpExceptions carrying only their status.
    if (exception instanceof HttpException) {
      const byStatus = PARSER_FAILURES[exception.getStatus()];
      if (byStatus) return byStatus();
      // The router's or framework's own refusals (a path it does not route, say) are the client's, never a 500.
      const refusal = frameworkRefusal(exception.getStatus(), request);
      if (refusal) return refusal;
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    return new DomainError('internal_error', 'An unexpected error occurred.');
  }
}

/** A 4xx the framework raised as a contract error: 404 and 405 as such, any other as invalid_request. */
function frameworkRefusal(status: number, request: FastifyRequest): DomainError | undefined {
  if (status === 404) return new DomainError('not_found', `No resource at ${request.url.split('?')[0]}.`);
  if (status === 405) return new DomainError('method_not_allowed', `${request.method} is not allowed here.`);
  if (status >= 400 && status < 500) return new DomainError('invalid_request', 'The request cannot be served.');
  return undefined;
}
