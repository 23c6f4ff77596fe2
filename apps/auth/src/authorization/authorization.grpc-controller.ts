import { authV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { GatewayCaller } from '../callers/gateway-caller';
import { AuthorizationService } from './authorization.service';

/**
 * The authorization endpoint's checks and the login page's sign-in: public, like the token endpoint,
 * and like it believing the end user's IP, device and user agent from the gateway only.
 */
@Controller()
@PublicRpc()
export class AuthorizationGrpcController implements Pick<
  authV1.AuthServiceController,
  'checkAuthorization' | 'authorize'
> {
  constructor(
    private readonly authorization: AuthorizationService,
    private readonly gateway: GatewayCaller,
  ) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'checkAuthorization')
  checkAuthorization(request: authV1.CheckAuthorizationRequest): Promise<authV1.CheckAuthorizationResponse> {
    return this.authorization.check(request);
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'authorize')
  async authorize(request: authV1.AuthorizeRequest, metadata?: Metadata): Promise<authV1.AuthorizeResponse> {
    await this.gateway.assertMayName(metadata, request);
    return this.authorization.authorize(request);
  }
}
