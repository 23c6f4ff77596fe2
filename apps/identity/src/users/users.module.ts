import { Module } from '@nestjs/common';

import { PasswordSetTokensRepository } from '../activation/password-set-tokens.repository';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OrgsModule } from '../orgs/orgs.module';
import { OutboxModule } from '../outbox/outbox.module';
import { PasswordsModule } from '../passwords/passwords.module';
import { PrismaModule } from '../prisma/prisma.module';
import { QuotaModule } from '../quota/quota.module';
import { CreateUserService } from './create-user.service';
import { GetUserService } from './get-user.service';
import { UsersGrpcController } from './users.grpc-controller';
import { UsersRepository } from './users.repository';

/** CreateUser and GetUser. */
@Module({
  imports: [PrismaModule, OrgsModule, PasswordsModule, IdempotencyModule, OutboxModule, QuotaModule],
  controllers: [UsersGrpcController],
  providers: [UsersRepository, CreateUserService, GetUserService, PasswordSetTokensRepository],
  exports: [UsersRepository],
})
export class UsersModule {}
