import { acceptRequestId, REQUEST_ID_HEADER, runInRequestContext } from '@acct/observability';
import { Metadata } from '@grpc/grpc-js';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable } from 'rxjs';

/** Runs every gRPC handler inside the caller's request context, so its logs carry the request id. */
@Injectable()
export class GrpcRequestContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const metadata = context.switchToRpc().getContext<Metadata>();
    const [candidate] = metadata instanceof Metadata ? metadata.get(REQUEST_ID_HEADER) : [];
    const requestId = acceptRequestId(candidate);
    return new Observable((subscriber) =>
      runInRequestContext({ requestId }, () => next.handle().subscribe(subscriber)),
    );
  }
}
