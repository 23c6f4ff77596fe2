import { DomainError } from '@acct/problem';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { fastifyErrorToDomainError } from './fastify-errors';
import { sendProblem } from './problem';
import { RouteTable } from './route-table';

const PARSER_FAILURES: Record<number, () => DomainError> = {
  400: () => new DomainError('malformed_body', 'The request body is not valid JSON.'),
  413: () => new DomainError('payload_too_large', 'The request body is larger than 64 KiB.'),
  415: () => new DomainError('unsupported_media_type', 'Send the body as application/json.'),
};

/** Every error leaves the gateway as problem+json with a code and the request id. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  constructor(private readonly routes: RouteTable) {}

  catch(exception: unknown, host: ArgumentsHost) {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    return sendProblem(request, reply, this.toDomainError(exception, request));
  }

  toDomainError(exception: unknown, request: FastifyRequest): DomainError {
    if (exception instanceof DomainError) return exception;
    // An unknown path or method is answered as such, even when its body failed to parse first.
    const allowed = this.routes.allowed(request.url);
    const routed = allowed.includes(request.method) || (request.method === 'HEAD' && allowed.includes('GET'));
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
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    return new DomainError('internal_error', 'An unexpected error occurred.');
  }
}
