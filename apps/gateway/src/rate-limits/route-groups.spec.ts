import { groupOf } from './route-groups';

describe('groupOf', () => {
  it.each([
    ['POST', '/v2/auth/token', 'auth'],
    ['GET', '/v2/users/:id', 'users.read'],
    ['GET', '/v2/users/me', 'users.read'],
    ['POST', '/v2/users', 'users.write'],
    ['POST', '/v2/users/:id/reset-password', 'users.write'],
    ['GET', '/v2/system/rate-limits', 'system.read'],
    ['GET', '/v2/system/quota', 'system.read'],
    ['GET', '/v2/system/health', 'system.health'],
    ['GET', '/v2/auth/jwks', 'default'],
    ['GET', undefined, 'default'],
  ])('%s %s is in %s', (method, route, group) => {
    expect(groupOf(method, route)).toBe(group);
  });
});
