import { acceptRequestId, REQUEST_ID_HEADER, runInRequestContext } from '@acct/observability';
import { Metadata, ServerUnaryCall } from '@grpc/grpc-js';
import { GrpcOptions, ServerGrpc } from '@nestjs/microservices';

/** The request id a call's metadata carries when it is a sane one (the gateway's), else a new one. */
export function requestIdOf(metadata: unknown): string {
  const [candidate] = metadata instanceof Metadata ? metadata.get(REQUEST_ID_HEADER) : [];
  return acceptRequestId(candidate);
}

/** What every kind of incoming call (unary or streaming) has: its metadata and its deadline. */
type IncomingCall = Pick<ServerUnaryCall<unknown, unknown>, 'metadata' | 'getDeadline'>;

/** When a call ends (ms since the epoch); undefined when its caller set no deadline. */
function deadlineOf(call: IncomingCall): number | undefined {
  const deadline = Number(call.getDeadline());
  return Number.isFinite(deadline) ? deadline : undefined;
}

/** Runs each of Nest's grpc-js method handlers in the request context of the call it is given. */
class RequestContextServerGrpc extends ServerGrpc {
  override createServiceMethod(...args: Parameters<ServerGrpc['createServiceMethod']>) {
    const handle = super.createServiceMethod(...args) as (call: IncomingCall, callback?: unknown) => unknown;
    // `handle` settles on its own: Nest's rpc proxy turns a handler's failure into the call's error status.
    return (call: IncomingCall, callback?: unknown) =>
      runInRequestContext({ requestId: requestIdOf(call.metadata), deadline: deadlineOf(call) }, () =>
        handle(call, callback),
      );
  }
}

/**
 * Nest's gRPC server, each of whose calls runs inside its caller's request context: the handler's
 * logs and audit rows carry the request id, and the calls it makes to other services end no later
 * than the call's own deadline (gRPC deadline propagation, see `deadline` in client-call.ts). It wraps
 * the grpc-js handler Nest makes of each method, which is given the call itself (Nest's own hook, run
 * before a call is handled, only gets a copy without `getDeadline`); not an interceptor: a Nest
 * interceptor wraps every call in several rxjs observables (identity's CPU per users-read was
 * 875–1,018 µs with one, 694–757 without; README).
 */
export function requestContextGrpcServer(options: GrpcOptions['options']): ServerGrpc {
  return new RequestContextServerGrpc(options);
}
