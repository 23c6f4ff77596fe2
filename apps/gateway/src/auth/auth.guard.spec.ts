import { Caller } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

import { Public, RequireScope } from './access.decorators';
import { AuthGuard } from './auth.guard';
import { Authentication } from './authenticated-request';

class Routes {
  @Public()
  open(this: void) {}

  @RequireScope('users:write')
  write(this: void) {}
}

const caller = (scopes: string[]): Caller => ({
  subject: 'user-1',
  kind: 'user',
  orgId: 'org-1',
  clientId: 'web',
  scopes: new Set(scopes),
  roles: ['member'],
  tokenId: 'token-1',
  expiresAt: Date.now() + 60_000,
});

const contextOf = (handler: keyof Routes, request: Authentication) =>
  ({
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request }),
  }) as unknown as ExecutionContext;

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) {
      return { status: error.status, code: error.code, challenge: error.options.headers?.['WWW-Authenticate'] };
    }
    throw error;
  }
  throw new Error('the guard let the request through');
}

describe('AuthGuard', () => {
  const guard = new AuthGuard(new Reflector());

  it('lets anyone through a @Public() route, with or without a valid token', () => {
    expect(guard.canActivate(contextOf('open', {}))).toBe(true);
    expect(guard.canActivate(contextOf('open', { authFailure: new DomainError('unauthenticated', 'bad') }))).toBe(true);
  });

  it('asks for a token with the invalid_token challenge of contract §1 when the request has none', () => {
    expect(refusal(() => guard.canActivate(contextOf('write', {})))).toEqual({
      status: 401,
      code: 'unauthenticated',
      challenge: 'Bearer realm="account-platform", error="invalid_token"',
    });
  });

  it("answers with the authenticate hook's own failure (401 or 503) when the token was not accepted", () => {
    const failure = new DomainError('service_unavailable', 'auth is unavailable', { retryAfter: 1 });
    expect(() => guard.canActivate(contextOf('write', { authFailure: failure }))).toThrow(failure);
  });

  it('refuses a caller without the route’s scope with 403 and the RFC 6750 challenge naming it', () => {
    expect(refusal(() => guard.canActivate(contextOf('write', { caller: caller(['users:read']) })))).toEqual({
      status: 403,
      code: 'insufficient_scope',
      challenge: 'Bearer realm="account-platform", error="insufficient_scope", scope="users:write"',
    });
  });

  it('lets a caller with the scope through', () => {
    expect(guard.canActivate(contextOf('write', { caller: caller(['users:read', 'users:write']) }))).toBe(true);
  });
});
