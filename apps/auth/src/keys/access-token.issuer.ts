import { randomUUID } from 'node:crypto';

import { AccessTokenClaims } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { SigningKeyService } from './signing-key.service';

/** Who an access token speaks for, and what it allows. */
export interface AccessTokenSubject {
  /** A user id, or a client id for a client's own token. */
  subject: string;
  kind: 'user' | 'client';
  orgId: string;
  clientId: string;
  scopes: readonly string[];
  roles: readonly string[];
  /** The token's id when the caller must know it in advance (an authorization code records it); else random. */
  jti?: string;
  /**
   * The refresh family the token is issued from, as the `sid` claim (OpenID's session id): revoking
   * the family revokes the token. None for client_credentials.
   */
  sessionId?: string;
}

export interface IssuedAccessToken {
  token: string;
  /** Whom it speaks for: its `sub` and `org_id`. */
  subject: string;
  orgId: string;
  /** Seconds. */
  expiresIn: number;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** Space-separated, as in the token. */
  scope: string;
}

/** RFC 9068 access tokens (`typ: at+jwt`), ES256-signed with the active key, named by `kid`. */
@Injectable()
export class AccessTokenIssuer {
  constructor(
    private readonly keys: SigningKeyService,
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async issue(subject: AccessTokenSubject, ttlSeconds = this.config.ACCESS_TOKEN_TTL_SECONDS) {
    const signer = await this.keys.currentSigner();
    const issuedAt = Math.floor(this.clock.now() / 1000);
    const scope = subject.scopes.join(' ');
    const claims: AccessTokenClaims = {
      iss: this.config.TOKEN_ISSUER,
      sub: subject.subject,
      aud: this.config.TOKEN_AUDIENCE,
      iat: issuedAt,
      exp: issuedAt + ttlSeconds,
      jti: subject.jti ?? randomUUID(),
      scope,
      org_id: subject.orgId,
      client_id: subject.clientId,
      roles: [...subject.roles],
      kind: subject.kind,
      ...(subject.sessionId ? { sid: subject.sessionId } : {}),
    };
    const token = signer.sign(claims);
    return {
      token,
      subject: subject.subject,
      orgId: subject.orgId,
      expiresIn: ttlSeconds,
      expiresAt: (issuedAt + ttlSeconds) * 1000,
      scope,
    } satisfies IssuedAccessToken;
  }
}
