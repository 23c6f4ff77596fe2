import { acceptRequestId, REQUEST_ID_HEADER, runInRequestContext } from '@acct/observability';
import { Metadata } from '@grpc/grpc-js';
import { GrpcOptions, ServerGrpc } from '@nestjs/microservices';

/** The request id a call's metadata carries when it is a sane one (the gateway's), else a new one. */
export function requestIdOf(metadata: unknown): string {
  const [candidate] = metadata instanceof Metadata ? metadata.get(REQUEST_ID_HEADER) : [];
  return acceptRequestId(candidate);
}

/**
 * Nest's gRPC server, each of whose calls runs inside its caller's request context, so the handler's
 * logs and audit rows carry the request id. It is Nest's own hook for this (run before a call is
 * handled, with the call), not an interceptor: a Nest interceptor wraps every call in several rxjs
 * observables (identity's CPU per users-read was 875–1,018 µs with one, 694–757 without; README).
 */
export function requestContextGrpcServer(options: GrpcOptions['options']): ServerGrpc {
  const server = new ServerGrpc(options);
  // `handle` settles on its own: Nest's rpc proxy turns a handler's failure into the call's error status.
  server.setOnProcessingStartHook((_transport, call, handle) => {
    void runInRequestContext({ requestId: requestIdOf((call as { metadata?: unknown }).metadata) }, handle);
  });
  return server;
}
