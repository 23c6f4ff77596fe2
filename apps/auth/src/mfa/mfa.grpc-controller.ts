import { authV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { MfaService } from './mfa.service';
import { RecoveryCodesService } from './recovery-codes.service';

type Methods = 'enrollTotp' | 'confirmTotp' | 'createRecoveryCodes';

/** TOTP enrolment and recovery codes for the calling user (checked in the services). */
@Controller()
export class MfaGrpcController implements Pick<authV1.AuthServiceController, Methods> {
  constructor(
    private readonly mfa: MfaService,
    private readonly recoveryCodes: RecoveryCodesService,
  ) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'enrollTotp')
  enrollTotp(request: authV1.EnrollTotpRequest, metadata?: Metadata): Promise<authV1.EnrollTotpResponse> {
    return this.mfa.enroll(callerOf(metadata), bearerTokenOf(metadata) ?? '', request.password);
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'confirmTotp')
  confirmTotp(request: authV1.ConfirmTotpRequest, metadata?: Metadata): Promise<authV1.ConfirmTotpResponse> {
    return this.mfa.confirm(callerOf(metadata), request.code);
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'createRecoveryCodes')
  createRecoveryCodes(
    request: authV1.CreateRecoveryCodesRequest,
    metadata?: Metadata,
  ): Promise<authV1.CreateRecoveryCodesResponse> {
    return this.recoveryCodes.create(callerOf(metadata), bearerTokenOf(metadata) ?? '', request.password);
  }
}
