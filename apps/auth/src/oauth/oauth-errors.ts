import { DomainError } from '@acct/problem';

/** The RFC 6749 §5.2 `error` values this service answers with. */
type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

/**
 * Token endpoint errors (contract §4): a DomainError whose problem document also carries the RFC 6749
 * members `error` and `error_description`.
 */
const oauthError = (
  code: OAuthErrorCode,
  error: OAuthErrorCode,
  description: string,
  headers?: Record<string, string>,
) =>
  new DomainError(code, description, {
    extensions: { error, error_description: description },
    ...(headers ? { headers } : {}),
  });

export const CLIENT_AUTH_REALM = 'account-platform';

export const OAuthErrors = {
  /** A required parameter is missing (or a grant's parameters do not fit together). */
  invalidRequest: (description: string) => oauthError('invalid_request', 'invalid_request', description),

  /** Echoes at most 64 characters of what was sent: the detail travels in gRPC metadata. */
  unsupportedGrantType: (grantType: string) =>
    oauthError(
      'unsupported_grant_type',
      'unsupported_grant_type',
      `The grant type "${grantType.length > 64 ? `${grantType.slice(0, 64)}…` : grantType}" is not supported; ` +
        'use authorization_code, password, client_credentials or refresh_token.',
    ),

  invalidScope: (description: string) => oauthError('invalid_scope', 'invalid_scope', description),

  /** One answer for an unknown user and a wrong password: the same status, body and detail. */
  badCredentials: () => oauthError('invalid_grant', 'invalid_grant', 'The username or password is incorrect.'),

  /** Unknown, expired, revoked or reused refresh token: the caller learns nothing about which. */
  badRefreshToken: () => oauthError('invalid_grant', 'invalid_grant', 'The refresh token is invalid or expired.'),

  /** Unknown client or wrong secret (RFC 6749 §5.2: 401 with a `WWW-Authenticate` challenge). */
  invalidClient: () =>
    oauthError('invalid_client', 'invalid_client', 'Client authentication failed.', {
      'WWW-Authenticate': `Basic realm="${CLIENT_AUTH_REALM}"`,
    }),

  /** An authenticated client asking for a grant type it is not registered for. */
  unauthorizedClient: (grantType: string) =>
    oauthError('unauthorized_client', 'unauthorized_client', `The client may not use the ${grantType} grant.`),
  /** An authorization code that is unknown, used, expired, or not bound to this client, URI or verifier. */
  badAuthorizationCode: () =>
    oauthError('invalid_grant', 'invalid_grant', 'The authorization code is invalid, expired or already used.'),

  /** A correct password of an account an admin disabled (contract §7). */
  accountDisabled: () => {
    const description = 'The account is disabled; an admin of its organization can enable it.';
    return new DomainError('account_disabled', description, {
      extensions: { error: 'invalid_grant', error_description: description },
    });
  },
  /** A correct password of an account that is not active yet (contract §4). */
  accountNotActive: () => {
    const description = 'The account is not active yet; it must be activated before it can log in.';
    return new DomainError('account_not_active', description, {
      extensions: { error: 'invalid_grant', error_description: description },
    });
  },
};
