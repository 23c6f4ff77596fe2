import { identityV1 } from '@acct/contracts';
import { callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { VerifyPasswordService } from './verify-password.service';

@Controller()
export class CredentialsGrpcController implements Pick<
  identityV1.IdentityServiceController,
  'verifyPassword' | 'resolveLoginKey'
> {
  constructor(private readonly verifyPasswords: VerifyPasswordService) {}

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'verifyPassword')
  verifyPassword(
    request: identityV1.VerifyPasswordRequest,
    metadata?: Metadata,
  ): Promise<identityV1.VerifyPasswordResponse> {
    return this.verifyPasswords.verify(callerOf(metadata), request.email, request.password);
  }

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'resolveLoginKey')
  async resolveLoginKey(
    request: identityV1.ResolveLoginKeyRequest,
    metadata?: Metadata,
  ): Promise<identityV1.ResolveLoginKeyResponse> {
    return this.verifyPasswords.loginKey(callerOf(metadata), request.username);
  }
}
