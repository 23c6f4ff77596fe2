import { Module } from '@nestjs/common';

import { PasswordsModule } from '../passwords/passwords.module';
import { PrismaModule } from '../prisma/prisma.module';
import { CredentialsGrpcController } from './credentials.grpc-controller';
import { CredentialsRepository } from './credentials.repository';
import { VerifyPasswordService } from './verify-password.service';

/** The login view of users: password hashes by username, and the login checks (VerifyPassword). */
@Module({
  imports: [PrismaModule, PasswordsModule],
  controllers: [CredentialsGrpcController],
  providers: [CredentialsRepository, VerifyPasswordService],
  exports: [CredentialsRepository],
})
export class CredentialsModule {}
