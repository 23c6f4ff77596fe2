import { AccessTokenVerifier, bearerToken } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { Authentication, REALM } from './authenticated-request';

export const GATEWAY_VERIFIER = Symbol('GATEWAY_VERIFIER');

/** The 401 of a protected route called without any Authorization header (RFC 6750 §3.1: no error code). */
export const missingToken = () =>
  new DomainError('unauthenticated', 'This operation needs a bearer access token.', {
    headers: { 'WWW-Authenticate': `Bearer realm="${REALM}"` },
  });

/**
 * Runs first for every request (Fastify onRequest): verifies the bearer token once and leaves the
 * outcome on the request: `caller` for a valid one, `authFailure` for any other, nothing without one. It refuses nothing itself:
 * the rate limiter reads the caller (per-token buckets, the org's tiers) and the AuthGuard turns a
 * missing caller into the 401 on protected routes; public routes ignore both.
 */
@Injectable()
export class AuthenticateHook {
  constructor(@Inject(GATEWAY_VERIFIER) private readonly verifier: AccessTokenVerifier) {}

  async handle(request: FastifyRequest): Promise<void> {
    const authentication = request as FastifyRequest & Authentication;
    const header = request.headers.authorization;
    if (!header) return; // no token: the guard answers with missingToken() on protected routes
    const token = bearerToken(header);
    if (!token) {
      authentication.authFailure = new DomainError(
        'unauthenticated',
        'The Authorization header is not a bearer token.',
        { headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"` } },
      );
      return;
    }
    try {
      authentication.caller = await this.verifier.verify(token);
      authentication.accessToken = token;
    } catch (error) {
      authentication.authFailure = error as Error;
    }
  }
}
