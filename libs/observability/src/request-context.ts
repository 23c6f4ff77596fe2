import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestContext {
  requestId: string;
  /**
   * When the incoming gRPC call being served ends (ms since the epoch), if its caller set a deadline:
   * the calls made for it end no later (`GrpcClient.call`). Unset for HTTP requests, events and jobs.
   */
  deadline?: number;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const REQUEST_ID_HEADER = 'x-request-id';

/** A client's own request id is kept only when it is short and plain; anything else is replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function acceptRequestId(candidate: unknown): string {
  return typeof candidate === 'string' && SANE_REQUEST_ID.test(candidate) ? candidate : randomUUID();
}

export function runInRequestContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

export function currentDeadline(): number | undefined {
  return storage.getStore()?.deadline;
}
