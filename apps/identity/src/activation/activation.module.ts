import { Module } from '@nestjs/common';

import { CredentialsModule } from '../credentials/credentials.module';
import { OutboxModule } from '../outbox/outbox.module';
import { PasswordSetTokenPruner } from '../password-set-tokens/password-set-token-pruner';
import { PasswordSetTokensRepository } from '../password-set-tokens/password-set-tokens.repository';
import { PasswordsModule } from '../passwords/passwords.module';
import { PrismaModule } from '../prisma/prisma.module';
import { UsersModule } from '../users/users.module';
import { PasswordSetGrpcController } from './password-set.grpc-controller';
import { PasswordSetService } from './password-set.service';

/** Activation and password reset: one-time password:set tokens (expired ones deleted hourly). */
@Module({
  imports: [PrismaModule, UsersModule, PasswordsModule, CredentialsModule, OutboxModule],
  controllers: [PasswordSetGrpcController],
  providers: [PasswordSetService, PasswordSetTokensRepository, PasswordSetTokenPruner],
})
export class ActivationModule {}
