import { requireScope } from '@acct/access-token';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { PUBLIC_ROUTE, REQUIRED_SCOPE } from './access.decorators';
import { missingToken } from './authenticate.hook';
import { Authentication, REALM } from './authenticated-request';

/**
 * The gateway's first gate: a protected route needs the caller the authenticate hook found (else the
 * hook's 401) carrying the route's scope (else 403). The services check the token again, with their
 * own org and role rules.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const { caller, authFailure } = context.switchToHttp().getRequest<FastifyRequest & Authentication>();
    if (!caller) throw authFailure ?? missingToken();
    const scope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets);
    if (scope) requireScope(caller, scope, { realm: REALM });
    return true;
  }
}
