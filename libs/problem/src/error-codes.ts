/**
 * The stable machine codes of contract §1 (plus the RFC 6749 token errors of §4), with the HTTP status
 * each one answers with. Clients switch on these; never rename one.
 */
export const ERROR_STATUS = {
  malformed_body: 400,
  validation_failed: 400,
  invalid_request: 400,
  invalid_grant: 400,
  invalid_scope: 400,
  unsupported_grant_type: 400,
  unauthorized_client: 400,
  account_not_active: 400,
  account_disabled: 400,
  invalid_mfa_code: 400,
  invalid_client: 401,
  unauthenticated: 401,
  insufficient_scope: 403,
  forbidden: 403,
  mfa_required: 403,
  quota_exceeded: 403,
  not_found: 404,
  method_not_allowed: 405,
  email_taken: 409,
  phone_taken: 409,
  last_admin: 409,
  idempotency_key_in_use: 409,
  mfa_already_enabled: 409,
  mfa_not_enrolled: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  login_locked: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const TITLES: Record<ErrorCode, string> = {
  malformed_body: 'Malformed request body',
  validation_failed: 'Validation failed',
  invalid_request: 'Invalid request',
  invalid_grant: 'Invalid grant',
  invalid_scope: 'Invalid scope',
  unsupported_grant_type: 'Unsupported grant type',
  unauthorized_client: 'Unauthorized client',
  account_not_active: 'Account not active',
  account_disabled: 'Account disabled',
  invalid_mfa_code: 'Invalid MFA code',
  invalid_client: 'Invalid client',
  unauthenticated: 'Unauthenticated',
  insufficient_scope: 'Insufficient scope',
  forbidden: 'Forbidden',
  mfa_required: 'MFA code required',
  quota_exceeded: 'Quota exceeded',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  email_taken: 'E-mail already registered',
  phone_taken: 'Mobile number already registered',
  last_admin: 'Last active admin',
  idempotency_key_in_use: 'Idempotency key in use',
  mfa_already_enabled: 'MFA already enabled',
  mfa_not_enrolled: 'MFA not enrolled',
  precondition_failed: 'Precondition failed',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_reused: 'Idempotency key reused',
  rate_limited: 'Rate limit exceeded',
  login_locked: 'Login locked',
  internal_error: 'Internal error',
  service_unavailable: 'Service unavailable',
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}
