import { authV1 } from '@acct/contracts';
import { JSONWebKeySet } from 'jose';

import { grpcFailureToDomainError } from './error-mapping';
import { callRaw, createRawClient } from './raw-client';

/**
 * Fetches the auth service's public keys over gRPC (`auth.v1.AuthService/GetJwks`). An unreachable
 * auth is `service_unavailable` (a verifier without keys cannot tell a token's validity: the caller
 * retries), not an internal error.
 */
export function jwksFromAuthService(address: string, configuredProtoDir?: string, timeoutMs = 2000) {
  const client = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', address, configuredProtoDir);
  return async (): Promise<JSONWebKeySet> => {
    const answer = await callRaw<object, authV1.GetJwksResponse>(client, 'getJwks', {}, timeoutMs).catch(
      (failure: unknown) => {
        throw grpcFailureToDomainError(failure, 'auth');
      },
    );
    return toJwks(answer);
  };
}

/** A `GetJwks` answer as an RFC 7517 JWK Set: only the public members of each key. */
export function toJwks(response: authV1.GetJwksResponse): JSONWebKeySet {
  return { keys: response.keys.map(({ kty, kid, use, alg, crv, x, y }) => ({ kty, kid, use, alg, crv, x, y })) };
}
