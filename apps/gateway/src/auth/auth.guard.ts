import { requireScope } from '@acct/access-token';
import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { RouteAccess, routeAccess } from './access.decorators';
import { missingToken } from './authenticate.hook';
import { Authentication, REALM } from './authenticated-request';

/**
 * The gateway's first gate: a protected route needs the caller the authenticate hook found (else the
 * hook's 401) carrying the route's scope (else 403). The services check the token again, with their
 * own org and role rules.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /**
   * Per controller class and handler (a handler's rule may come from its class): decorators do not
   * change, and reading them was four metadata look-ups a request.
   */
  private readonly access = new WeakMap<object, WeakMap<object, RouteAccess>>();

  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const access = this.accessOf(context);
    if (access.isPublic) return true;
    const { caller, authFailure } = context.switchToHttp().getRequest<FastifyRequest & Authentication>();
    if (!caller) throw authFailure ?? missingToken();
    if (access.scope) requireScope(caller, access.scope, { realm: REALM });
    return true;
  }

  private accessOf(context: ExecutionContext): RouteAccess {
    const [handler, controller] = [context.getHandler(), context.getClass()];
    let handlers = this.access.get(controller);
    if (!handlers) this.access.set(controller, (handlers = new WeakMap()));
    let access = handlers.get(handler);
    if (!access) handlers.set(handler, (access = routeAccess(this.reflector, handler, controller)));
    return access;
  }
}
