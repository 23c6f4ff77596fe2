import { IssuedAccessToken } from '../../keys/access-token.issuer';
import { OAuthErrors } from '../../oauth/oauth-errors';

/** A token request as the gateway passes it on (contract §4); absent fields are empty strings. */
export interface TokenRequest {
  grantType: string;
  username: string;
  password: string;
  scope: string;
  mfaCode: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  /** authorization_code only (RFC 6749 §4.1.3, RFC 7636 §4.5). */
  code?: string;
  redirectUri?: string;
  codeVerifier?: string;
  /** Who asks, for lockout and audit. */
  clientIp: string;
  deviceId: string;
  userAgent: string;
  /** The device credential the client presented (X-Device-Token), or empty/absent. */
  deviceToken?: string;
}

/** The token set of interface §2.2. */
export interface TokenSet {
  accessToken: string;
  /** Empty when the grant issues none (client_credentials, RFC 6749 §4.4.3). */
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  scope: string;
  /** A password login's new device credential (X-Device-Token); empty for other grants. */
  deviceToken: string;
}

/** What a grant issued: the token set, and whom its access token speaks for (for the login audit). */
export interface Issued {
  tokens: TokenSet;
  subject: string;
  orgId: string;
}

/** One OAuth grant type. */
export interface Grant {
  readonly grantType: string;
  issue(request: TokenRequest): Promise<Issued>;
}

export const issued = (access: IssuedAccessToken, refreshToken = '', deviceToken = ''): Issued => ({
  tokens: {
    accessToken: access.token,
    refreshToken,
    tokenType: 'Bearer',
    expiresIn: access.expiresIn,
    scope: access.scope,
    deviceToken,
  },
  subject: access.subject,
  orgId: access.orgId,
});

/** The value of a parameter the grant cannot do without. */
export function required(request: TokenRequest, field: keyof TokenRequest, name: string): string {
  const value = request[field] ?? '';
  if (value.length === 0) throw OAuthErrors.invalidRequest(`The ${name} parameter is required for this grant.`);
  return value;
}
