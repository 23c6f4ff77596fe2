import { INTERNAL_IDENTITY_SCOPE } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { Inject, Injectable } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { AccessTokenIssuer } from '../keys/access-token.issuer';

/** Auth's own identity when it calls identity: a client of no org, allowed `internal:identity` only. */
export const SERVICE_SUBJECT = {
  subject: 'service:auth',
  kind: 'client',
  orgId: '00000000-0000-0000-0000-000000000000',
  clientId: 'auth',
  scopes: [INTERNAL_IDENTITY_SCOPE],
  roles: [],
} as const;

/** A short-lived access token for auth's own calls, reused until a quarter of its lifetime is left. */
@Injectable()
export class ServiceToken {
  private cached?: { token: string; expiresAt: number };

  constructor(
    private readonly issuer: AccessTokenIssuer,
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  async get(): Promise<string> {
    const ttlMs = this.config.SERVICE_TOKEN_TTL_SECONDS * 1000;
    if (this.cached && this.cached.expiresAt - this.clock.now() > ttlMs / 4) return this.cached.token;
    const issued = await this.issuer.issue(SERVICE_SUBJECT, this.config.SERVICE_TOKEN_TTL_SECONDS);
    this.cached = { token: issued.token, expiresAt: issued.expiresAt };
    return issued.token;
  }

  /** Drops the cached token (after identity refused it). */
  forget(): void {
    this.cached = undefined;
  }
}
