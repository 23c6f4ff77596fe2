import { authV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { TokenService } from './token.service';

/** The token endpoint: public, the grant carries the credentials. */
@Controller()
@PublicRpc()
export class TokensGrpcController implements Pick<authV1.AuthServiceController, 'issueToken'> {
  constructor(private readonly tokens: TokenService) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'issueToken')
  issueToken(request: authV1.IssueTokenRequest): Promise<authV1.IssueTokenResponse> {
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
      code: request.code,
      redirectUri: request.redirectUri,
      codeVerifier: request.codeVerifier,
    });
  }
}
