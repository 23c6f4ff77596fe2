import { authV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { AuthorizationService } from './authorization.service';

/** The authorization endpoint's checks and the login page's sign-in: public, like the token endpoint. */
@Controller()
@PublicRpc()
export class AuthorizationGrpcController implements Pick<
  authV1.AuthServiceController,
  'checkAuthorization' | 'authorize'
> {
  constructor(private readonly authorization: AuthorizationService) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'checkAuthorization')
  checkAuthorization(request: authV1.CheckAuthorizationRequest): Promise<authV1.CheckAuthorizationResponse> {
    return this.authorization.check(request);
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'authorize')
  authorize(request: authV1.AuthorizeRequest): Promise<authV1.AuthorizeResponse> {
    return this.authorization.authorize(request);
  }
}
