import { identityV1 } from '@acct/contracts';
import { callerOf, PublicRpc } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { PasswordSetService } from './password-set.service';

@Controller()
export class PasswordSetGrpcController implements Pick<
  identityV1.IdentityServiceController,
  'setPassword' | 'checkPasswordSetToken' | 'requestPasswordReset'
> {
  constructor(private readonly passwordSet: PasswordSetService) {}

  /** Public: the one-time password:set token in the request is the credential. */
  @PublicRpc()
  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'setPassword')
  async setPassword(request: identityV1.SetPasswordRequest): Promise<identityV1.SetPasswordResponse> {
    return { user: await this.passwordSet.setPassword(request.token, request.password) };
  }

  /** Public: the token is the credential; nothing is consumed. */
  @PublicRpc()
  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'checkPasswordSetToken')
  async checkPasswordSetToken(
    request: identityV1.CheckPasswordSetTokenRequest,
  ): Promise<identityV1.CheckPasswordSetTokenResponse> {
    await this.passwordSet.checkToken(request.token);
    return {};
  }

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'requestPasswordReset')
  requestPasswordReset(
    request: identityV1.RequestPasswordResetRequest,
    metadata?: Metadata,
  ): Promise<identityV1.RequestPasswordResetResponse> {
    return this.passwordSet.requestReset(callerOf(metadata), request.userId, request.sendEmail);
  }
}
