import { DomainError } from '@acct/problem';

import { requireRole, requireScope, requireUser } from './authorization';
import { Caller } from './caller';

const caller = (overrides: Partial<Caller> = {}): Caller => ({
  subject: 'user-1',
  kind: 'user',
  orgId: 'org-1',
  clientId: 'web',
  scopes: new Set(['users:read']),
  roles: ['member'],
  tokenId: 'jti-1',
  expiresAt: Date.now() + 60_000,
  ...overrides,
});

const refusal = (check: () => void): DomainError => {
  try {
    check();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('the check passed');
};

describe('requireScope', () => {
  it('lets a caller whose token carries the scope through', () => {
    expect(() => requireScope(caller(), 'users:read')).not.toThrow();
  });

  it('refuses any other with 403 insufficient_scope and the RFC 6750 challenge naming the scope', () => {
    const error = refusal(() => requireScope(caller(), 'users:write'));
    expect(error).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(error.options.headers).toEqual({
      'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="users:write"',
    });
  });

  it('names the realm when given one (the gateway)', () => {
    const error = refusal(() => requireScope(caller(), 'system:read', { realm: 'api' }));
    expect(error.options.headers?.['WWW-Authenticate']).toBe(
      'Bearer realm="api", error="insufficient_scope", scope="system:read"',
    );
  });
});

describe('requireRole', () => {
  it('reads the roles of the token', () => {
    expect(() => requireRole(caller({ roles: ['admin'] }), 'admin')).not.toThrow();
    expect(refusal(() => requireRole(caller({ roles: ['member'] }), 'admin'))).toMatchObject({
      code: 'forbidden',
      status: 403,
    });
  });
});

describe('requireUser', () => {
  it('refuses a client acting for itself', () => {
    expect(() => requireUser(caller())).not.toThrow();
    expect(refusal(() => requireUser(caller({ kind: 'client' }), 'Only users.'))).toMatchObject({
      code: 'forbidden',
      detail: 'Only users.',
    });
  });
});
