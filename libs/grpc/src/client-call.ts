import { currentRequestId, REQUEST_ID_HEADER } from '@acct/observability';
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

/** gRPC call options with a deadline `deadlineMs` from now. */
export const deadline = (deadlineMs: number) => ({ deadline: new Date(Date.now() + deadlineMs) });

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
