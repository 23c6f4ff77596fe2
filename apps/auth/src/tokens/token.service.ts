import { DomainError, hasControlCharacter } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';

import { attributionOf } from '../audit/login-attribution';
import { LoginAudit } from '../audit/login-audit';
import { AUTH_CONFIG, AuthConfig } from '../config';
import { AuthMetrics } from '../metrics/auth-metrics';
import { OAuthErrors } from '../oauth/oauth-errors';
import { AuthorizationCodeGrant } from './grants/authorization-code.grant';
import { ClientCredentialsGrant } from './grants/client-credentials.grant';
import { Grant, Issued, TokenRequest, TokenSet } from './grants/grant';
import { PASSWORD, PasswordGrant } from './grants/password.grant';
import { RefreshTokenGrant } from './grants/refresh-token.grant';

/** The token endpoint (interface §4.2): picks the grant the request names. */
@Injectable()
export class TokenService {
  private readonly grants: ReadonlyMap<string, Grant>;

  constructor(
    password: PasswordGrant,
    clientCredentials: ClientCredentialsGrant,
    refreshToken: RefreshTokenGrant,
    authorizationCode: AuthorizationCodeGrant,
    private readonly audit: LoginAudit,
    private readonly metrics: AuthMetrics,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {
    this.grants = new Map(
      [password, clientCredentials, refreshToken, authorizationCode].map((grant) => [grant.grantType, grant]),
    );
  }

  /** Issues a token set; every request, granted or refused, is recorded in the login audit and the metrics. */
  async issue(request: TokenRequest): Promise<TokenSet> {
    // A password login that names no client is the built-in public client's (its tokens say so): its
    // entry in the login audit too.
    const audited =
      request.grantType === PASSWORD && !request.clientId
        ? { ...request, clientId: this.config.DEFAULT_PUBLIC_CLIENT_ID }
        : request;
    const { tokens } = await this.recorded(
      audited,
      () => this.dispatch(request),
      ({ subject, orgId }) => ({ subject, orgId }),
    );
    return tokens;
  }

  /**
   * Runs one login-like request (a grant, or the login page's sign-in) with the login audit and
   * metrics every token request gets; `whoOf` names the subject and org of a success.
   */
  async recorded<T>(
    request: TokenRequest,
    work: () => Promise<T>,
    whoOf: (result: T) => { subject?: string; orgId?: string },
  ): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      this.metrics.loginAttempt(request.grantType, error instanceof DomainError ? error.code : 'internal_error');
      await this.audit.record(request, {
        outcome: 'failure',
        reason: error instanceof DomainError ? error.auditReason : 'internal_error',
        // A refused password login of a known user: its org sees it (contract §7).
        ...attributionOf(error),
      });
      throw error;
    }
    this.metrics.loginAttempt(request.grantType, 'success');
    await this.audit.record(request, { outcome: 'success', reason: 'issued', ...whoOf(result) });
    return result;
  }

  private dispatch(request: TokenRequest): Promise<Issued> {
    refuseControlCharacters(request);
    if (!request.grantType) throw OAuthErrors.invalidRequest('The grant_type parameter is required.');
    const grant = this.grants.get(request.grantType);
    if (!grant) throw OAuthErrors.unsupportedGrantType(request.grantType);
    return grant.issue(request);
  }
}

/** The request's parameters as the client named them (RFC 6749), for the refusal's description. */
const PARAMETERS: ReadonlyArray<[keyof TokenRequest, string]> = [
  ['grantType', 'grant_type'],
  ['username', 'username'],
  ['password', 'password'],
  ['scope', 'scope'],
  ['mfaCode', 'mfa_code'],
  ['clientId', 'client_id'],
  ['clientSecret', 'client_secret'],
  ['refreshToken', 'refresh_token'],
  ['code', 'code'],
  ['redirectUri', 'redirect_uri'],
  ['codeVerifier', 'code_verifier'],
];

/**
 * No parameter holds a control character (U+0000–U+001F, U+007F–U+009F): `400 invalid_request`
 * before any lookup, so neither identity nor auth's database ever sees one (Postgres refuses U+0000
 * in text). The attempt is audited like any refusal, its values escaped (`LoginAudit`).
 */
function refuseControlCharacters(request: TokenRequest): void {
  for (const [field, parameter] of PARAMETERS) {
    const value = request[field];
    if (typeof value === 'string' && hasControlCharacter(value)) {
      throw OAuthErrors.invalidRequest(`${parameter} must not contain control characters.`);
    }
  }
}
