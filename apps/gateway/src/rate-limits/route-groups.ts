import type { RateLimitGroup } from '@acct/limits';

/** Contract §2: which endpoint group a request is counted in, by method and route pattern. */
export function groupOf(method: string, route: string | undefined): RateLimitGroup {
  const path = route ?? '';
  if (method === 'POST' && path === '/v2/auth/token') return 'auth';
  if (path === '/v2/system/health') return 'system.health';
  if (method === 'GET' && (path === '/v2/system/rate-limits' || path === '/v2/system/quota')) return 'system.read';
  if (path === '/v2/users' || path.startsWith('/v2/users/')) {
    if (method === 'GET' || method === 'HEAD') return 'users.read';
    if (method === 'POST') return 'users.write';
  }
  return 'default';
}
