import { parseScope } from '@acct/access-token';

import { OAuthErrors } from './oauth-errors';

/**
 * The scopes to grant (contract §4): none asked for → everything `allowed` (a role's defaults, a
 * client's registered scopes, a refresh token's original scope); otherwise exactly what was asked,
 * which must all be allowed. Sorted, so the same grant always reads the same.
 */
export function grantScopes(requested: string | undefined, allowed: readonly string[]): string[] {
  const wanted = parseScope(requested);
  if (wanted.length === 0) return [...new Set(allowed)].sort();
  const refused = wanted.filter((scope) => !allowed.includes(scope));
  if (refused.length > 0) {
    throw OAuthErrors.invalidScope(`The scope ${refused.join(' ')} is not available to this grant.`);
  }
  return wanted.sort();
}
