import { identityV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { CreateUserService } from './create-user.service';
import { GetUserService } from './get-user.service';

@Controller()
export class UsersGrpcController implements Pick<identityV1.IdentityServiceController, 'createUser' | 'getUser'> {
  constructor(
    private readonly createUsers: CreateUserService,
    private readonly getUsers: GetUserService,
  ) {}

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'createUser')
  createUser(request: identityV1.CreateUserRequest, metadata?: Metadata): Promise<identityV1.CreateUserResponse> {
    return this.createUsers.create(
      callerOf(metadata),
      {
        email: request.email,
        displayName: request.displayName,
        password: request.password,
        roles: request.roles,
        orgId: request.orgId,
        sendActivation: request.sendActivation,
        profile: request.profile ? { locale: request.profile.locale, timezone: request.profile.timezone } : undefined,
        idempotencyKey: request.idempotencyKey,
        requestFingerprint: request.requestFingerprint,
      },
      bearerTokenOf(metadata),
    );
  }

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'getUser')
  async getUser(request: identityV1.GetUserRequest, metadata?: Metadata): Promise<identityV1.GetUserResponse> {
    return { user: await this.getUsers.get(callerOf(metadata), request.id) };
  }
}
