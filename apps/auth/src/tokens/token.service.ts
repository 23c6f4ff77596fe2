import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';
import { decodeJwt } from 'jose';

import { auditReasonOf } from '../audit/audit-reason';
import { LoginAudit } from '../audit/login-audit';
import { AuthMetrics } from '../metrics/auth-metrics';
import { OAuthErrors } from '../oauth/oauth-errors';
import { ClientCredentialsGrant } from './grants/client-credentials.grant';
import { Grant, TokenRequest, TokenSet } from './grants/grant';
import { PasswordGrant } from './grants/password.grant';
import { RefreshTokenGrant } from './grants/refresh-token.grant';

/** The token endpoint (interface §4.2): picks the grant the request names. */
@Injectable()
export class TokenService {
  private readonly grants: ReadonlyMap<string, Grant>;

  constructor(
    password: PasswordGrant,
    clientCredentials: ClientCredentialsGrant,
    refreshToken: RefreshTokenGrant,
    private readonly audit: LoginAudit,
    private readonly metrics: AuthMetrics,
  ) {
    this.grants = new Map([password, clientCredentials, refreshToken].map((grant) => [grant.grantType, grant]));
  }

  /** Issues a token set; every request, granted or refused, is recorded in the login audit and the metrics. */
  async issue(request: TokenRequest): Promise<TokenSet> {
    let issued: TokenSet;
    try {
      issued = await this.dispatch(request);
    } catch (error) {
      this.metrics.loginAttempt(request.grantType, error instanceof DomainError ? error.code : 'internal_error');
      await this.audit.record(request, {
        outcome: 'failure',
        reason: error instanceof DomainError ? auditReasonOf(error) : 'internal_error',
      });
      throw error;
    }
    this.metrics.loginAttempt(request.grantType, 'success');
    const claims = decodeJwt(issued.accessToken);
    await this.audit.record(request, {
      outcome: 'success',
      reason: 'issued',
      subject: claims.sub,
      orgId: typeof claims.org_id === 'string' ? claims.org_id : undefined,
    });
    return issued;
  }

  private dispatch(request: TokenRequest): Promise<TokenSet> {
    if (!request.grantType) throw OAuthErrors.invalidRequest('The grant_type parameter is required.');
    const grant = this.grants.get(request.grantType);
    if (!grant) throw OAuthErrors.unsupportedGrantType(request.grantType);
    return grant.issue(request);
  }
}
