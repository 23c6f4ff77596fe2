import { authV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Controller } from '@nestjs/common';

import { SigningKeyService } from './keys/signing-key.service';
import { TokenService } from './tokens/token.service';

/** `auth.v1.AuthService`: both methods are public (the grant carries the credentials; keys are public). */
@Controller()
@PublicRpc()
@authV1.AuthServiceControllerMethods()
export class AuthGrpcController implements authV1.AuthServiceController {
  constructor(
    private readonly tokens: TokenService,
    private readonly keys: SigningKeyService,
  ) {}

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
    });
  }

  async getJwks(): Promise<authV1.GetJwksResponse> {
    return { keys: await this.keys.publishedKeys() };
  }
}
