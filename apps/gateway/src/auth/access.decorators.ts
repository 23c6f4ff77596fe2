import { ExecutionContext, SetMetadata, Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

export const PUBLIC_ROUTE = 'acct:public-route';
export const REQUIRED_SCOPE = 'acct:required-scope';

/** A route anyone may call without a token (token issuance, JWKS, health). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** The scope a bearer token must carry for this route. */
export const RequireScope = (scope: string) => SetMetadata(REQUIRED_SCOPE, scope);

/** What a route asks of its caller. */
export interface RouteAccess {
  isPublic: boolean;
  scope?: string;
}

/** A route's access as its decorators declare it: the handler's own, else its controller's. */
export function routeAccess(
  reflector: Reflector,
  handler: ReturnType<ExecutionContext['getHandler']>,
  controller: Type,
): RouteAccess {
  const targets = [handler, controller];
  return {
    isPublic: reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, targets) ?? false,
    scope: reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets),
  };
}
