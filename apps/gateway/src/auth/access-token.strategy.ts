import type { IncomingMessage } from 'node:http';

import { AccessTokenVerifier, bearerToken, Caller } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import passport from 'passport';

import { REALM } from './authenticated-request';

export const GATEWAY_VERIFIER = Symbol('GATEWAY_VERIFIER');
export const ACCESS_TOKEN_STRATEGY = 'access-token';

type Verify = (token: string, done: (error: unknown, caller?: Caller | null) => void) => void;

/**
 * RFC 6750 bearer authentication as a passport strategy: the token only from the `Authorization`
 * header (not from the query or the body, which passport-http-bearer also reads), parsed by
 * `bearerToken` of `@acct/access-token`. Outcomes:
 * - no header: `fail()` without a challenge (public routes go on; protected ones answer `missingToken`);
 * - not a bearer token, or a token the verifier refuses: `fail(error)`, the 401 problem with its
 *   `WWW-Authenticate: Bearer … error="invalid_token"` challenge;
 * - the verifier cannot decide (the auth service's keys unreachable): `error(error)`, its 503;
 * - a valid token: `success(caller, { accessToken })`.
 */
export class BearerTokenStrategy extends passport.Strategy {
  constructor(private readonly verifyToken: Verify) {
    super();
    this.name = ACCESS_TOKEN_STRATEGY;
  }

  override authenticate(request: Pick<IncomingMessage, 'headers'>): void {
    const header = request.headers.authorization;
    if (!header) return this.fail();
    const token = bearerToken(header);
    if (!token) {
      return this.fail(
        new DomainError('unauthenticated', 'The Authorization header is not a bearer token.', {
          headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"` },
        }),
      );
    }
    this.verifyToken(token, (error, caller) => {
      if (caller) return this.success(caller, { accessToken: token });
      if (error instanceof DomainError && error.code === 'unauthenticated') return this.fail(error);
      this.error(error);
    });
  }
}

/** The gateway's access tokens, verified locally against the auth service's keys (`GATEWAY_VERIFIER`). */
@Injectable()
export class AccessTokenStrategy extends PassportStrategy(BearerTokenStrategy, ACCESS_TOKEN_STRATEGY) {
  constructor(@Inject(GATEWAY_VERIFIER) private readonly verifier: AccessTokenVerifier) {
    super();
  }

  validate(token: string): Promise<Caller> {
    return this.verifier.verify(token);
  }

  /**
   * The caller of a bearer `header` as far as the keys at hand tell, never waiting for the auth
   * service; undefined for any token they do not verify (see `AuthenticateHook.handle`).
   */
  async callerAtHand(header: string): Promise<{ caller: Caller; accessToken: string } | undefined> {
    const token = bearerToken(header);
    if (!token) return undefined;
    try {
      return { caller: await this.verifier.verify(token, { waitForKeys: false }), accessToken: token };
    } catch {
      return undefined;
    }
  }
}
