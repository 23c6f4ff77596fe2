import { DomainError } from '@acct/problem';
import { ArgumentsHost, Catch, Logger, RpcExceptionFilter } from '@nestjs/common';
import { Observable, throwError } from 'rxjs';

import { domainErrorToGrpc } from './error-mapping';

/**
 * The edge of every gRPC service: a DomainError leaves as its gRPC status with the payload in
 * metadata; anything unexpected is logged (with the request id) and leaves as a bare INTERNAL.
 */
@Catch()
export class DomainErrorRpcFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger('grpc');

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    if (exception instanceof DomainError) {
      return throwError(() => domainErrorToGrpc(exception));
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    return throwError(() => domainErrorToGrpc(new DomainError('internal_error', 'An unexpected error occurred.')));
  }
}
