import { Module } from '@nestjs/common';

import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OrgsModule } from '../orgs/orgs.module';
import { OutboxModule } from '../outbox/outbox.module';
import { PasswordSetTokensRepository } from '../password-set-tokens/password-set-tokens.repository';
import { PasswordsModule } from '../passwords/passwords.module';
import { PrismaModule } from '../prisma/prisma.module';
import { QuotaModule } from '../quota/quota.module';
import { CallerRoles } from './caller-roles';
import { CreateUserService } from './create-user.service';
import { DeleteUserService } from './delete-user.service';
import { GetUserService } from './get-user.service';
import { ListUsersService } from './list-users.service';
import { UpdateUserService } from './update-user.service';
import { UserAdminChanges } from './user-admin';
import { UserStatusService } from './user-status.service';
import { UsersGrpcController } from './users.grpc-controller';
import { UsersRepository } from './users.repository';

/** Users: creation, reads, and their administration by the org's admins (contract §3, §7). */
@Module({
  imports: [PrismaModule, OrgsModule, PasswordsModule, IdempotencyModule, OutboxModule, QuotaModule],
  controllers: [UsersGrpcController],
  providers: [
    UsersRepository,
    CallerRoles,
    CreateUserService,
    GetUserService,
    ListUsersService,
    UpdateUserService,
    UserAdminChanges,
    UserStatusService,
    DeleteUserService,
    PasswordSetTokensRepository,
  ],
  exports: [UsersRepository, CallerRoles],
})
export class UsersModule {}
