import { DomainError } from '@acct/problem';

const reasons = new WeakMap<DomainError, string>();

/**
 * Marks a refusal with a more precise reason for the login audit than its public code (a wrong MFA
 * code is `invalid_grant` to the client, `mfa_code_invalid` in the audit). Returns the error.
 */
export function withAuditReason(error: DomainError, reason: string): DomainError {
  reasons.set(error, reason);
  return error;
}

/** The audit reason of a refusal: the one it was marked with, else its code. */
export const auditReasonOf = (error: DomainError): string => reasons.get(error) ?? error.code;
