import { AccessTokenVerifier } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { authV1 } from '@acct/contracts';
import { ACCESS_TOKEN_VERIFIER } from '@acct/grpc';
import { DomainError } from '@acct/problem';
import { Revocations } from '@acct/revocation';
import { Inject, Injectable } from '@nestjs/common';
import { decodeJwt } from 'jose';

import { ClientService, REFRESH_TOKEN } from '../clients/client.service';
import { AUTH_CONFIG, AuthConfig } from '../config';
import { OAuthErrors } from '../oauth/oauth-errors';
import { RefreshTokenService } from '../refresh/refresh-token.service';
import { Requester } from './requester';

const INACTIVE: authV1.IntrospectTokenResponse = {
  active: false,
  scope: '',
  clientId: '',
  sub: '',
  exp: 0,
  iat: 0,
  iss: '',
  aud: '',
  jti: '',
  tokenType: '',
  orgId: '',
};

/**
 * RFC 7662 introspection. Active only when the token is valid right now: an access token that
 * verifies (signature, lifetime, not revoked) and whose `exp` auth's own clock has not reached, or a
 * refresh token that could still be exchanged (its family live, its user's sessions not ended since,
 * its client still registered for refresh_token); and of the asking client's org. Anything else is
 * `{active: false}` and nothing more.
 */
@Injectable()
export class TokenIntrospectionService {
  constructor(
    private readonly refreshTokens: RefreshTokenService,
    private readonly clients: ClientService,
    private readonly revocations: Revocations,
    private readonly clock: Clock,
    @Inject(ACCESS_TOKEN_VERIFIER) private readonly verifier: AccessTokenVerifier,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async introspect(
    token: string,
    tokenTypeHint: string,
    requester: Requester,
  ): Promise<authV1.IntrospectTokenResponse> {
    if (token.length === 0) throw OAuthErrors.invalidRequest('The token parameter is required.');
    const found =
      tokenTypeHint === 'refresh_token'
        ? ((await this.refreshToken(token)) ?? (await this.accessToken(token)))
        : ((await this.accessToken(token)) ?? (await this.refreshToken(token)));
    if (!found) return INACTIVE;
    const ofRequester =
      requester.kind === 'internal' || requester.orgId === undefined || requester.orgId === found.orgId;
    return ofRequester ? found : INACTIVE;
  }

  private async accessToken(token: string): Promise<authV1.IntrospectTokenResponse | undefined> {
    try {
      // The verifier allows 5 s past `exp` for another process's clock; the issuer's own says no more.
      if ((await this.verifier.verify(token)).expiresAt <= this.clock.now()) return undefined;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'service_unavailable') throw error;
      return undefined;
    }
    const claims = decodeJwt(token);
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    return {
      active: true,
      scope: text(claims.scope),
      clientId: text(claims.client_id),
      sub: text(claims.sub),
      exp: claims.exp ?? 0,
      iat: claims.iat ?? 0,
      iss: text(claims.iss),
      aud: Array.isArray(claims.aud) ? claims.aud.join(' ') : text(claims.aud),
      jti: text(claims.jti),
      tokenType: 'Bearer',
      orgId: text(claims.org_id),
    };
  }

  private async refreshToken(token: string): Promise<authV1.IntrospectTokenResponse | undefined> {
    const stored = await this.refreshTokens.find(token);
    if (!stored || !this.refreshTokens.isUsable(stored)) return undefined;
    const endedBefore = this.revocations.set.subjectRevokedBefore(stored.orgId, stored.userId);
    if (endedBefore !== undefined && stored.createdAt.getTime() < endedBefore) return undefined;
    if (!(await this.exchangeableFor(stored.clientId))) return undefined;
    return {
      active: true,
      scope: stored.scopes.join(' '),
      clientId: stored.clientId,
      sub: stored.userId,
      exp: Math.floor(this.refreshTokens.usableUntil(stored) / 1000),
      iat: Math.floor(stored.createdAt.getTime() / 1000),
      iss: this.config.TOKEN_ISSUER,
      aud: this.config.TOKEN_AUDIENCE,
      // Contract §6 lists jti among an active token's members: a refresh token's own id (not its family's).
      jti: stored.id,
      tokenType: 'refresh_token',
      orgId: stored.orgId,
    };
  }

  /** Whether the refresh grant would still take a token of `clientId`: a deleted client's are refused. */
  private async exchangeableFor(clientId: string): Promise<boolean> {
    if (clientId === this.config.DEFAULT_PUBLIC_CLIENT_ID) return true;
    const client = await this.clients.find(clientId);
    return client?.grantTypes.includes(REFRESH_TOKEN) ?? false;
  }
}
