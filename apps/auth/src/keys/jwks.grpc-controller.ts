import { authV1 } from '@acct/contracts';
import { PublicRpc } from '@acct/grpc';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { SigningKeyService } from './signing-key.service';

/** The public keys access tokens are verified with: public. */
@Controller()
@PublicRpc()
export class JwksGrpcController implements Pick<authV1.AuthServiceController, 'getJwks'> {
  constructor(private readonly keys: SigningKeyService) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'getJwks')
  async getJwks(): Promise<authV1.GetJwksResponse> {
    return { keys: await this.keys.publishedKeys() };
  }
}
