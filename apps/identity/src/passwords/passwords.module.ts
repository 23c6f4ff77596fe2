import { Module } from '@nestjs/common';

import { PasswordHasher } from './password-hasher';

/** Password hashing (argon2id); the password rules and events beside it are plain functions. */
@Module({
  providers: [PasswordHasher],
  exports: [PasswordHasher],
})
export class PasswordsModule {}
