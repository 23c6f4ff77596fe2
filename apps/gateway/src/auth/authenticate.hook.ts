import { Caller } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import passport from 'passport';

import { AccessTokenStrategy } from './access-token.strategy';
import { Authentication, hasSeveralAuthorizations, REALM } from './authenticated-request';

/**
 * The 401 of a protected route called without any Authorization header. Contract §1 gives "no" token
 * the same challenge as a malformed or expired one, `error="invalid_token"`: RFC 6750 §3.1 only
 * advises against an error code here (SHOULD NOT), the contract decides for it, and a client that
 * renews its token on `invalid_token` must do so when its token went missing too. (An unsupported
 * scheme and the activation endpoint's missing one-time token already answer so.)
 */
export const missingToken = () =>
  new DomainError('unauthenticated', 'This operation needs a bearer access token.', {
    headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"` },
  });

/**
 * Runs first for every request (Fastify onRequest): authenticates the bearer token once with the
 * passport strategy (`AccessTokenStrategy`) and leaves the outcome on the request: `caller` for a
 * valid token, `authFailure` for any other, nothing without one. It refuses nothing itself: the rate
 * limiter reads the caller (per-token buckets, the org's tiers) and the AuthGuard turns a missing
 * caller into the 401 on protected routes; public routes ignore both.
 */
@Injectable()
export class AuthenticateHook {
  /** The routes that take no access token, as `GET /v2/system/health` (see `tokenlessRoutes`). */
  private publicRoutes: ReadonlySet<string> = new Set();

  // Nest builds the strategy for the hook, which registers it with passport under its name.
  constructor(private readonly strategy: AccessTokenStrategy) {}

  /**
   * The routes that take no token, the `@Public()` ones (interface §4.3: for health "the token is not
   * checked"). A token sent there only names whose tiers the request counts under, and is read from
   * the keys at hand: one naming a key the gateway does not know made the request wait for the auth
   * service's keys (up to a second, or a gRPC deadline while auth is away) for nothing.
   */
  tokenlessRoutes(routes: ReadonlyArray<{ method: string; path: string }>): void {
    this.publicRoutes = new Set(routes.map(({ method, path }) => `${method} ${path}`));
  }

  async handle(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // No header: the strategy would fail() without a challenge, which leaves nothing on the request.
    // Health checks and token requests skip passport altogether.
    const header = request.headers.authorization;
    if (header === undefined) return;
    const outcome = request as FastifyRequest & Authentication;
    if (this.isPublic(request)) {
      if (!hasSeveralAuthorizations(request)) Object.assign(outcome, await this.strategy.callerAtHand(header));
      return;
    }
    if (hasSeveralAuthorizations(request)) {
      outcome.authFailure = new DomainError('unauthenticated', 'Send one Authorization header, not several.', {
        headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"` },
      });
      return;
    }
    return new Promise((resolve) => {
      const done = (error: unknown, caller?: Caller | false, info?: unknown) => {
        if (caller) {
          outcome.caller = caller;
          outcome.accessToken = (info as { accessToken: string }).accessToken;
        } else if (error ?? info) {
          outcome.authFailure = (error ?? info) as Error;
        }
        resolve();
      };
      const authenticate = passport.authenticate(this.strategy.name!, { session: false }, done) as (
        request: FastifyRequest,
        reply: FastifyReply,
        next: () => void,
      ) => void;
      authenticate(request, reply, resolve);
    });
  }

  /** Whether the request's route is one of `publicRoutes` (a HEAD is its GET route's). */
  private isPublic(request: FastifyRequest): boolean {
    const path = request.routeOptions?.url;
    if (path === undefined) return false;
    return this.publicRoutes.has(`${request.method === 'HEAD' ? 'GET' : request.method} ${path}`);
  }
}
