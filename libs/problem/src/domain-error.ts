import { ERROR_STATUS, ErrorCode, isErrorCode } from './error-codes';

/** One failing input field; `field` is a dotted path such as `profile.timezone`. */
export interface FieldError {
  field: string;
  message: string;
}

export interface DomainErrorOptions {
  /** Overrides the code's usual status (`quota_exceeded` is 403 or 429). */
  status?: number;
  errors?: FieldError[];
  /** Seconds; becomes `Retry-After`. */
  retryAfter?: number;
  /** Extra members for the problem document (for example RFC 6749 `error`). */
  extensions?: Record<string, unknown>;
  /** Extra response headers (for example `WWW-Authenticate`). */
  headers?: Record<string, string>;
  /**
   * A more precise reason for the service's own audit trail than the public code (a wrong MFA code is
   * `invalid_grant` to the client, `mfa_code_invalid` in the login audit). It stays in the process
   * that threw the error: it is not part of the payload sent to other services or clients.
   */
  auditReason?: string;
}

/** The serialisable form of a DomainError, carried across gRPC in trailing metadata. */
export interface DomainErrorPayload extends Omit<DomainErrorOptions, 'auditReason'> {
  code: ErrorCode;
  detail: string;
}

/**
 * An expected failure with a stable code. Services throw it; each transport maps it at its edge
 * (gRPC status + metadata in services, problem+json at the gateway).
 */
export class DomainError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: DomainErrorOptions = {},
  ) {
    super(`${code}: ${detail}`);
    this.name = 'DomainError';
    this.status = options.status ?? ERROR_STATUS[code];
  }

  /** What an audit trail records for this refusal: its audit reason, else its code. */
  get auditReason(): string {
    return this.options.auditReason ?? this.code;
  }

  toPayload(): DomainErrorPayload {
    const { auditReason: _internal, ...options } = this.options;
    return { code: this.code, detail: this.detail, ...options, status: this.status };
  }

  static fromPayload(payload: unknown): DomainError | undefined {
    if (typeof payload !== 'object' || payload === null) return undefined;
    const { code, detail, ...options } = payload as Partial<DomainErrorPayload>;
    if (!isErrorCode(code) || typeof detail !== 'string') return undefined;
    return new DomainError(code, detail, options);
  }
}

export const validationFailed = (errors: FieldError[], detail = 'The request has invalid fields.') =>
  new DomainError('validation_failed', detail, { errors });
