import { DomainError } from '@acct/problem';
import { ArgumentsHost, Catch, Logger, RpcExceptionFilter } from '@nestjs/common';
import { Observable, throwError } from 'rxjs';

import { isDependencyUnavailable } from './dependency-failure';
import { domainErrorToGrpc } from './error-mapping';

/**
 * The edge of every gRPC service: a DomainError leaves as its gRPC status with the payload in
 * metadata; an unreachable or hung database leaves as `service_unavailable` (the caller may retry);
 * anything else unexpected is logged (with the request id) and leaves as a bare INTERNAL.
 */
@Catch()
export class DomainErrorRpcFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger('grpc');

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    if (exception instanceof DomainError) {
      return throwError(() => domainErrorToGrpc(exception));
    }
    if (isDependencyUnavailable(exception)) {
      this.logger.warn(`dependency unavailable: ${exception instanceof Error ? exception.message : String(exception)}`);
      return throwError(() =>
        domainErrorToGrpc(
          new DomainError('service_unavailable', 'A dependency of this service is unavailable; retry shortly.', {
            retryAfter: 1,
          }),
        ),
      );
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    return throwError(() => domainErrorToGrpc(new DomainError('internal_error', 'An unexpected error occurred.')));
  }
}
