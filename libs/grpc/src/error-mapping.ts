import { DomainError, ErrorCode } from '@acct/problem';
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import { Logger } from '@nestjs/common';

/** Trailing metadata key that carries a DomainError's payload from a service to the gateway. */
export const PROBLEM_METADATA_KEY = 'x-problem-bin';

const GRPC_STATUS_BY_CODE: Record<ErrorCode, GrpcStatus> = {
  malformed_body: GrpcStatus.INVALID_ARGUMENT,
  validation_failed: GrpcStatus.INVALID_ARGUMENT,
  invalid_request: GrpcStatus.INVALID_ARGUMENT,
  invalid_grant: GrpcStatus.INVALID_ARGUMENT,
  unauthorized_client: GrpcStatus.INVALID_ARGUMENT,
  invalid_scope: GrpcStatus.INVALID_ARGUMENT,
  unsupported_grant_type: GrpcStatus.INVALID_ARGUMENT,
  account_not_active: GrpcStatus.FAILED_PRECONDITION,
  account_disabled: GrpcStatus.FAILED_PRECONDITION,
  invalid_mfa_code: GrpcStatus.INVALID_ARGUMENT,
  invalid_client: GrpcStatus.UNAUTHENTICATED,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  insufficient_scope: GrpcStatus.PERMISSION_DENIED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  mfa_required: GrpcStatus.PERMISSION_DENIED,
  quota_exceeded: GrpcStatus.RESOURCE_EXHAUSTED,
  not_found: GrpcStatus.NOT_FOUND,
  method_not_allowed: GrpcStatus.UNIMPLEMENTED,
  email_taken: GrpcStatus.ALREADY_EXISTS,
  phone_taken: GrpcStatus.ALREADY_EXISTS,
  last_admin: GrpcStatus.FAILED_PRECONDITION,
  idempotency_key_in_use: GrpcStatus.ABORTED,
  mfa_already_enabled: GrpcStatus.ALREADY_EXISTS,
  mfa_not_enrolled: GrpcStatus.FAILED_PRECONDITION,
  precondition_failed: GrpcStatus.FAILED_PRECONDITION,
  payload_too_large: GrpcStatus.INVALID_ARGUMENT,
  unsupported_media_type: GrpcStatus.INVALID_ARGUMENT,
  idempotency_key_reused: GrpcStatus.FAILED_PRECONDITION,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  login_locked: GrpcStatus.RESOURCE_EXHAUSTED,
  internal_error: GrpcStatus.INTERNAL,
  service_unavailable: GrpcStatus.UNAVAILABLE,
};

export interface GrpcErrorObject {
  code: GrpcStatus;
  message: string;
  metadata: Metadata;
}

/** A DomainError as grpc-js sends it: a status, a message and the full payload in metadata. */
export function domainErrorToGrpc(error: DomainError): GrpcErrorObject {
  const metadata = new Metadata();
  metadata.set(PROBLEM_METADATA_KEY, Buffer.from(JSON.stringify(error.toPayload()), 'utf8'));
  return { code: GRPC_STATUS_BY_CODE[error.code], message: error.detail, metadata };
}

/** Logs the failures that leave as a bare internal error: nothing else says what they were. */
const logger = new Logger('grpc-client');

interface GrpcFailure {
  code?: number;
  details?: string;
  metadata?: Metadata;
}

/**
 * What the gateway makes of a failed call: the service's own DomainError when it sent one; an
 * unreachable, overloaded or slow backend is `service_unavailable` (the client may retry);
 * anything else is an internal error.
 */
export function grpcFailureToDomainError(failure: unknown, service: string): DomainError {
  const { code, details, metadata } = (failure ?? {}) as GrpcFailure;
  const [raw] = metadata instanceof Metadata ? metadata.get(PROBLEM_METADATA_KEY) : [];
  if (raw !== undefined) {
    try {
      const carried = DomainError.fromPayload(JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : raw));
      if (carried) return carried;
    } catch {
      // fall through: a payload we cannot read is an internal error below
    }
  }
  if (code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED || code === GrpcStatus.CANCELLED) {
    return new DomainError('service_unavailable', `The ${service} service is unavailable; retry shortly.`, {
      retryAfter: 1,
    });
  }
  // Not the service's own error (which it logged): grpc-js's (a method the service does not implement,
  // an answer too large or unreadable) or a payload that cannot be read. The 500 it becomes would
  // otherwise be logged nowhere with its cause.
  const name = code === undefined ? 'no status' : (GrpcStatus[code] ?? String(code));
  logger.error(`the ${service} service failed unexpectedly: ${name} ${details ?? ''}`.trimEnd());
  return new DomainError('internal_error', 'An unexpected error occurred.');
}
