import { authV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { GatewayCaller } from '../callers/gateway-caller';
import { TokenService } from './token.service';

/**
 * The token endpoint: public, the grant carries the credentials; only the gateway (its own token)
 * may name the end user's IP, device and user agent.
 */
@Controller()
@PublicRpc()
export class TokensGrpcController implements Pick<authV1.AuthServiceController, 'issueToken'> {
  constructor(
    private readonly tokens: TokenService,
    private readonly gateway: GatewayCaller,
  ) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'issueToken')
  async issueToken(request: authV1.IssueTokenRequest, metadata?: Metadata): Promise<authV1.IssueTokenResponse> {
    await this.gateway.assertMayName(metadata, request);
    return this.tokens.issue({
      grantType: request.grantType,
      username: request.username,
      password: request.password,
      scope: request.scope,
      mfaCode: request.mfaCode,
      clientId: request.clientId,
      clientSecret: request.clientSecret,
      refreshToken: request.refreshToken,
      clientIp: request.clientIp,
      deviceId: request.deviceId,
      userAgent: request.userAgent,
      deviceToken: request.deviceToken,
      code: request.code,
      redirectUri: request.redirectUri,
      codeVerifier: request.codeVerifier,
    });
  }
}
