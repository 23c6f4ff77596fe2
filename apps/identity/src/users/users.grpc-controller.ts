import { identityV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { CreateUserService } from './create-user.service';
import { DeleteUserService } from './delete-user.service';
import { GetUserService } from './get-user.service';
import { ListUsersService } from './list-users.service';
import { UpdateUserService } from './update-user.service';
import { UserStatusService } from './user-status.service';

type UsersMethods = 'createUser' | 'getUser' | 'listUsers' | 'updateUser' | 'disableUser' | 'enableUser' | 'deleteUser';

/** A merge-patch member: absent → undefined (unchanged), present without a value → null. */
const patchValue = (patch: identityV1.StringPatch | undefined): string | null | undefined =>
  patch === undefined ? undefined : (patch.value ?? null);

@Controller()
export class UsersGrpcController implements Pick<identityV1.IdentityServiceController, UsersMethods> {
  constructor(
    private readonly createUsers: CreateUserService,
    private readonly getUsers: GetUserService,
    private readonly lists: ListUsersService,
    private readonly updateUsers: UpdateUserService,
    private readonly userStatus: UserStatusService,
    private readonly deleteUsers: DeleteUserService,
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
        phone: request.phone,
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

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'listUsers')
  listUsers(request: identityV1.ListUsersRequest, metadata?: Metadata): Promise<identityV1.ListUsersResponse> {
    return this.lists.list(callerOf(metadata), request);
  }

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'updateUser')
  async updateUser(request: identityV1.UpdateUserRequest, metadata?: Metadata): Promise<identityV1.UpdateUserResponse> {
    const user = await this.updateUsers.update(
      callerOf(metadata),
      request.id,
      request.ifMatch,
      {
        displayName: request.displayName,
        roles: request.roles?.roles,
        locale: patchValue(request.locale),
        timezone: patchValue(request.timezone),
        phone: patchValue(request.phone),
      },
      request.ifNoneMatch,
    );
    return { user };
  }

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'disableUser')
  async disableUser(
    request: identityV1.DisableUserRequest,
    metadata?: Metadata,
  ): Promise<identityV1.DisableUserResponse> {
    return {
      user: await this.userStatus.disable(callerOf(metadata), request.id, request.ifMatch, request.ifNoneMatch),
    };
  }

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'enableUser')
  async enableUser(request: identityV1.EnableUserRequest, metadata?: Metadata): Promise<identityV1.EnableUserResponse> {
    return { user: await this.userStatus.enable(callerOf(metadata), request.id, request.ifMatch, request.ifNoneMatch) };
  }

  @GrpcMethod(identityV1.IDENTITY_SERVICE_NAME, 'deleteUser')
  async deleteUser(request: identityV1.DeleteUserRequest, metadata?: Metadata): Promise<identityV1.DeleteUserResponse> {
    await this.deleteUsers.delete(callerOf(metadata), request.id, request.ifMatch, request.ifNoneMatch);
    return {};
  }
}
