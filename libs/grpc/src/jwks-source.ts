import { authV1 } from '@acct/contracts';
import { JSONWebKeySet } from 'jose';

import { callRaw, createRawClient } from './raw-client';

/** Fetches the auth service's public keys over gRPC (`auth.v1.AuthService/GetJwks`). */
export function jwksFromAuthService(address: string, configuredProtoDir?: string, timeoutMs = 2000) {
  const client = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', address, configuredProtoDir);
  return async (): Promise<JSONWebKeySet> => {
    return toJwks(await callRaw<object, authV1.GetJwksResponse>(client, 'getJwks', {}, timeoutMs));
  };
}

/** A `GetJwks` answer as an RFC 7517 JWK Set: only the public members of each key. */
export function toJwks(response: authV1.GetJwksResponse): JSONWebKeySet {
  return { keys: response.keys.map(({ kty, kid, use, alg, crv, x, y }) => ({ kty, kid, use, alg, crv, x, y })) };
}
