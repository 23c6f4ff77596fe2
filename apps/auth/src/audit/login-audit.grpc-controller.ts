import { authV1 } from '@acct/contracts';
import { callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { LoginAudit } from './login-audit';

/** The org's login audit: its admins only (checked in LoginAudit). */
@Controller()
export class LoginAuditGrpcController implements Pick<authV1.AuthServiceController, 'listLoginAudit'> {
  constructor(private readonly audit: LoginAudit) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'listLoginAudit')
  async listLoginAudit(
    request: authV1.ListLoginAuditRequest,
    metadata?: Metadata,
  ): Promise<authV1.ListLoginAuditResponse> {
    return { entries: await this.audit.list(callerOf(metadata), request.limit, request.before) };
  }
}
