import { AccessTokenVerifier, bearerToken, Caller, requireScope } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { PUBLIC_ROUTE, REQUIRED_SCOPE } from './access.decorators';
import { AuthenticatedRequest, REALM } from './authenticated-request';

export const GATEWAY_VERIFIER = Symbol('GATEWAY_VERIFIER');

/**
 * The gateway's first gate: a valid bearer token (RFC 6750) carrying the route's scope. The services
 * check it again, with their own org and role rules.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(GATEWAY_VERIFIER) private readonly verifier: AccessTokenVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest & Partial<AuthenticatedRequest>>();
    // The rate limiter already verified a valid token of this request.
    if (request.caller) return this.checkScope(request.caller, targets);
    const header = request.headers.authorization;
    if (!header) {
      throw new DomainError('unauthenticated', 'This operation needs a bearer access token.', {
        headers: { 'WWW-Authenticate': `Bearer realm="${REALM}"` },
      });
    }
    const token = bearerToken(header);
    if (!token) {
      throw new DomainError('unauthenticated', 'The Authorization header is not a bearer token.', {
        headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token"` },
      });
    }
    request.caller = await this.verifier.verify(token);
    request.accessToken = token;
    return this.checkScope(request.caller, targets);
  }

  private checkScope(caller: Caller, targets: Parameters<Reflector['getAllAndOverride']>[1]): boolean {
    const scope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets);
    if (scope) requireScope(caller, scope, { realm: REALM });
    return true;
  }
}
