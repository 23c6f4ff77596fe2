import { JSONWebKeySet } from 'jose';

import { callRaw, createRawClient } from './raw-client';

/** Fetches the auth service's public keys over gRPC (`auth.v1.AuthService/GetJwks`). */
export function jwksFromAuthService(address: string, configuredProtoDir?: string, timeoutMs = 2000) {
  const client = createRawClient('auth/v1/auth.proto', 'auth.v1.AuthService', address, configuredProtoDir);
  return async (): Promise<JSONWebKeySet> => {
    const { keys } = await callRaw<object, { keys: Array<Record<string, string>> }>(client, 'getJwks', {}, timeoutMs);
    return {
      keys: keys.map(({ kty, kid, use, alg, crv, x, y }) => ({ kty, kid, use, alg, crv, x, y })),
    };
  };
}
