import { authV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { RemoveMfaService } from './remove-mfa.service';
import { UnlockUserService } from './unlock-user.service';

type Methods = 'clearUserLockout' | 'removeUserMfa';

/** An admin's unlock and MFA removal over gRPC; every rule is the services'. */
@Controller()
export class UserAdminGrpcController implements Pick<authV1.AuthServiceController, Methods> {
  constructor(
    private readonly unlocks: UnlockUserService,
    private readonly mfaRemovals: RemoveMfaService,
  ) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'clearUserLockout')
  async clearUserLockout(
    request: authV1.ClearUserLockoutRequest,
    metadata?: Metadata,
  ): Promise<authV1.ClearUserLockoutResponse> {
    await this.unlocks.unlock(callerOf(metadata), bearerTokenOf(metadata) ?? '', request.userId);
    return {};
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'removeUserMfa')
  async removeUserMfa(
    request: authV1.RemoveUserMfaRequest,
    metadata?: Metadata,
  ): Promise<authV1.RemoveUserMfaResponse> {
    const { userId, password, mfaCode } = request;
    await this.mfaRemovals.remove(callerOf(metadata), bearerTokenOf(metadata) ?? '', userId, password, mfaCode);
    return {};
  }
}
