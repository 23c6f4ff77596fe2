import { Injectable } from '@nestjs/common';

import { OAuthErrors } from '../oauth/oauth-errors';
import { ClientCredentialsGrant } from './grants/client-credentials.grant';
import { Grant, TokenRequest, TokenSet } from './grants/grant';
import { PasswordGrant } from './grants/password.grant';
import { RefreshTokenGrant } from './grants/refresh-token.grant';

/** The token endpoint (interface §4.2): picks the grant the request names. */
@Injectable()
export class TokenService {
  private readonly grants: ReadonlyMap<string, Grant>;

  constructor(password: PasswordGrant, clientCredentials: ClientCredentialsGrant, refreshToken: RefreshTokenGrant) {
    this.grants = new Map([password, clientCredentials, refreshToken].map((grant) => [grant.grantType, grant]));
  }

  async issue(request: TokenRequest): Promise<TokenSet> {
    if (!request.grantType) throw OAuthErrors.invalidRequest('The grant_type parameter is required.');
    const grant = this.grants.get(request.grantType);
    if (!grant) throw OAuthErrors.unsupportedGrantType(request.grantType);
    return grant.issue(request);
  }
}
