import { AccessTokenVerifier, followKeyWithdrawals } from '@acct/access-token';
import { Revocations } from '@acct/revocation';
import { Provider } from '@nestjs/common';

import { ACCESS_TOKEN_VERIFIER } from './caller.guard';
import { jwksFromAuthService } from './jwks-source';

export interface RemoteVerifierConfig {
  TOKEN_ISSUER: string;
  TOKEN_AUDIENCE: string;
  AUTH_GRPC_ADDR: string;
  GRPC_DEADLINE_MS: number;
  PROTO_DIR?: string;
}

/**
 * A verifier whose keys come from the auth service over gRPC (for every service but auth itself),
 * refusing revoked tokens and, as soon as auth announces it, the tokens of a withdrawn key.
 */
export function remoteVerifierProvider(configToken: symbol): Provider {
  return {
    provide: ACCESS_TOKEN_VERIFIER,
    inject: [configToken, Revocations],
    useFactory: (config: RemoteVerifierConfig, revocations: Revocations) =>
      followKeyWithdrawals(
        new AccessTokenVerifier({
          issuer: config.TOKEN_ISSUER,
          audience: config.TOKEN_AUDIENCE,
          fetchKeys: jwksFromAuthService(config.AUTH_GRPC_ADDR, config.PROTO_DIR, config.GRPC_DEADLINE_MS),
          revocations,
        }),
        revocations,
      ),
  };
}
