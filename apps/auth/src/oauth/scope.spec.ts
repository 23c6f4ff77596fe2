import { ROLE_DEFAULT_SCOPES, scopesOfRoles } from '@acct/access-token';
import { DomainError } from '@acct/problem';

import { grantScopes } from './scope';

describe('grantScopes', () => {
  it('grants every allowed scope when none is asked for', () => {
    expect(grantScopes('', ROLE_DEFAULT_SCOPES.viewer)).toEqual(['system:read', 'users:read']);
    expect(grantScopes('   ', ROLE_DEFAULT_SCOPES.viewer)).toEqual(['system:read', 'users:read']);
  });

  it('grants the union of the defaults of several roles', () => {
    expect(grantScopes('', scopesOfRoles(['viewer', 'member']))).toEqual([
      'instances:write',
      'system:read',
      'users:read',
    ]);
  });

  it('narrows to the requested subset, ignoring order and repeats', () => {
    expect(grantScopes('users:read system:read users:read', ROLE_DEFAULT_SCOPES.admin)).toEqual([
      'system:read',
      'users:read',
    ]);
  });

  it('refuses a scope beyond the allowed ones with invalid_scope', () => {
    let refusal: unknown;
    try {
      grantScopes('users:read users:write', ROLE_DEFAULT_SCOPES.viewer);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({
      code: 'invalid_scope',
      status: 400,
      options: { extensions: { error: 'invalid_scope' } },
    });
    expect((refusal as DomainError).detail).toContain('users:write');
  });

  it('refuses an unknown scope', () => {
    expect(() => grantScopes('admin:everything', ROLE_DEFAULT_SCOPES.admin)).toThrow(/invalid_scope/);
  });
});
