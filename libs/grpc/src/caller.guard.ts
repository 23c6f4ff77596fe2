import { AccessTokenVerifier, bearerToken, Caller } from '@acct/access-token';
import { DomainError } from '@acct/problem';
import { Metadata } from '@grpc/grpc-js';
import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

export const ACCESS_TOKEN_VERIFIER = Symbol('ACCESS_TOKEN_VERIFIER');
const PUBLIC_RPC = 'acct:public-rpc';

/** Marks a gRPC method that needs no caller (token issuance, JWKS, health). */
export const PublicRpc = () => SetMetadata(PUBLIC_RPC, true);

/** Needs a caller even inside a class marked @PublicRpc(). */
export const RequireCaller = () => SetMetadata(PUBLIC_RPC, false);

const callers = new WeakMap<Metadata, Caller>();

/** The verified caller of the call whose metadata this is. */
export function callerOf(metadata: Metadata | undefined): Caller {
  const caller = metadata ? callers.get(metadata) : undefined;
  if (!caller) throw new DomainError('unauthenticated', 'The call carries no verified caller.');
  return caller;
}

/** `authorization: Bearer <access token>` for outgoing calls made on behalf of a caller. */
export const AUTHORIZATION_METADATA_KEY = 'authorization';

/** The access token a call carries (to call another service on the same caller's behalf). */
export function bearerTokenOf(metadata: Metadata | undefined): string | undefined {
  const [header] = metadata instanceof Metadata ? metadata.get(AUTHORIZATION_METADATA_KEY) : [];
  return bearerToken(header);
}

/**
 * Every gRPC call must carry an access token (the end user's, forwarded by the gateway, or an internal
 * caller's own client-credentials token); it is verified here, in the service, not trusted from
 * the network. Methods marked @PublicRpc() are exempt.
 */
@Injectable()
export class CallerGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(ACCESS_TOKEN_VERIFIER) private readonly verifier: AccessTokenVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'rpc') return true;
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_RPC, [context.getHandler(), context.getClass()])) return true;
    const metadata = context.switchToRpc().getContext<Metadata>();
    const token = bearerTokenOf(metadata);
    if (!token) throw new DomainError('unauthenticated', 'The call carries no access token.');
    callers.set(metadata, await this.verifier.verify(token));
    return true;
  }
}
