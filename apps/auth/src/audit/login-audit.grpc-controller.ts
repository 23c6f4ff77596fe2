import { authV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { AdminAudit } from './admin-audit';
import { LoginAudit } from './login-audit';

/** The org's login audit and admin-action audit: its admins only (checked in LoginAudit and AdminAudit). */
@Controller()
export class LoginAuditGrpcController implements Pick<
  authV1.AuthServiceController,
  'listLoginAudit' | 'listAdminAudit'
> {
  constructor(
    private readonly audit: LoginAudit,
    private readonly adminAudit: AdminAudit,
  ) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'listLoginAudit')
  listLoginAudit(request: authV1.ListLoginAuditRequest, metadata?: Metadata): Promise<authV1.ListLoginAuditResponse> {
    return this.audit.list(callerOf(metadata), bearerTokenOf(metadata) ?? '', request);
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'listAdminAudit')
  listAdminAudit(request: authV1.ListAdminAuditRequest, metadata?: Metadata): Promise<authV1.ListAdminAuditResponse> {
    return this.adminAudit.list(callerOf(metadata), bearerTokenOf(metadata) ?? '', request.limit, request.cursor);
  }
}
