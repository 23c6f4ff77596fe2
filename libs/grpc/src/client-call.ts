import { currentDeadline, currentRequestId, REQUEST_ID_HEADER } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { Metadata } from '@grpc/grpc-js';
import { firstValueFrom, Observable } from 'rxjs';

import { grpcFailureToDomainError } from './error-mapping';

/** Metadata for an outgoing call: the current request id, plus anything the caller adds. */
export function outgoingMetadata(extra: Record<string, string> = {}): Metadata {
  const metadata = new Metadata();
  const requestId = currentRequestId();
  if (requestId) metadata.set(REQUEST_ID_HEADER, requestId);
  for (const [key, value] of Object.entries(extra)) metadata.set(key, value);
  return metadata;
}

/**
 * gRPC call options with a deadline `deadlineMs` from now, or the deadline of the incoming call being
 * served when that is earlier (gRPC deadline propagation): a call's work for a caller that has given
 * up (the gateway answered 503) is not passed on to the next service. Outside an incoming call (a job,
 * a consumer, an HTTP request) it is `deadlineMs` from now.
 */
export function deadline(deadlineMs: number): { deadline: Date } {
  const own = Date.now() + deadlineMs;
  const incoming = currentDeadline();
  return { deadline: new Date(incoming === undefined ? own : Math.min(own, incoming)) };
}

/**
 * Awaits one unary call; every failure becomes a DomainError (the service's own, or
 * `service_unavailable` for an unreachable or slow backend).
 */
export async function unary<T>(service: string, call: () => Observable<T>): Promise<T> {
  try {
    return await firstValueFrom(call());
  } catch (failure) {
    if (failure instanceof DomainError) throw failure;
    throw grpcFailureToDomainError(failure, service);
  }
}
