import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.module';
import { CredentialsRepository } from './credentials.repository';
import { PasswordHasher } from './password-hasher';
import { PasswordsGrpcController } from './passwords.grpc-controller';
import { VerifyPasswordService } from './verify-password.service';

/** Password hashing and login checks (VerifyPassword). */
@Module({
  imports: [PrismaModule],
  controllers: [PasswordsGrpcController],
  providers: [PasswordHasher, CredentialsRepository, VerifyPasswordService],
  exports: [PasswordHasher, CredentialsRepository],
})
export class PasswordsModule {}
