import { DomainError } from '@acct/problem';

/**
 * The in-memory revocation check every verifier consults after the signature and claims are valid
 * (libs/revocation's `Revocations` is one). It may throw a DomainError itself (503 while it has not
 * loaded the revocations yet).
 */
export interface RevocationCheck {
  isRevoked(token: { jti: string; sid?: string; sub: string; orgId: string; iat: number }): boolean;
}

/** Refuses a verified token that was revoked (by its jti, its refresh family or its subject). */
export function assertNotRevoked(
  check: RevocationCheck | undefined,
  claims: { jti?: string; sid?: unknown; sub?: string; org_id: string; iat?: number },
): void {
  if (!check) return;
  const token = {
    jti: claims.jti ?? '',
    sid: typeof claims.sid === 'string' ? claims.sid : undefined,
    sub: claims.sub ?? '',
    orgId: claims.org_id,
    iat: claims.iat ?? 0,
  };
  if (check.isRevoked(token)) {
    throw new DomainError('unauthenticated', 'The token has been revoked.', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="The token has been revoked."' },
    });
  }
}
