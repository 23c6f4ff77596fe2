import { runInRequestContext } from '@acct/observability';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';

/** Runs each route handler in its request's context, so logs and gRPC calls carry the request id. */
@Injectable()
export class HttpRequestContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return new Observable((subscriber) =>
      runInRequestContext({ requestId: request.id }, () => next.handle().subscribe(subscriber)),
    );
  }
}
