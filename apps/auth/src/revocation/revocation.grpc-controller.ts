import { authV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf, PublicRpc } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { RequesterAuthentication } from './requester';
import { TokenIntrospectionService } from './token-introspection.service';
import { TokenRevocationService } from './token-revocation.service';

type Methods = 'revokeToken' | 'introspectToken' | 'revokeUserTokens';

/**
 * Revocation (RFC 7009), introspection (RFC 7662) and ending a user's sessions. The first two are
 * public RPCs: the request's client authentication, or an internal caller's own token, decides
 * (RequesterAuthentication); the third needs a caller (checked in TokenRevocationService).
 */
@Controller()
export class RevocationGrpcController implements Pick<authV1.AuthServiceController, Methods> {
  constructor(
    private readonly requesters: RequesterAuthentication,
    private readonly revocation: TokenRevocationService,
    private readonly introspection: TokenIntrospectionService,
  ) {}

  @PublicRpc()
  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'revokeToken')
  async revokeToken(request: authV1.RevokeTokenRequest, metadata?: Metadata): Promise<authV1.RevokeTokenResponse> {
    const requester = await this.requesters.authenticate(request, metadata, { confidentialOnly: false });
    await this.revocation.revoke(request.token, request.tokenTypeHint, requester);
    return {};
  }

  @PublicRpc()
  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'introspectToken')
  async introspectToken(
    request: authV1.IntrospectTokenRequest,
    metadata?: Metadata,
  ): Promise<authV1.IntrospectTokenResponse> {
    const requester = await this.requesters.authenticate(request, metadata, { confidentialOnly: true });
    return this.introspection.introspect(request.token, request.tokenTypeHint, requester);
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'revokeUserTokens')
  async revokeUserTokens(
    request: authV1.RevokeUserTokensRequest,
    metadata?: Metadata,
  ): Promise<authV1.RevokeUserTokensResponse> {
    const caller = callerOf(metadata);
    const revokedSessions = await this.revocation.revokeUser(
      caller,
      bearerTokenOf(metadata) ?? '',
      request.userId,
      request.orgId,
    );
    return { revokedSessions };
  }
}
