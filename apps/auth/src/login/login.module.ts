import { Module } from '@nestjs/common';

import { IdentityModule } from '../identity/identity.module';
import { LockoutModule } from '../lockout/lockout.module';
import { MfaModule } from '../mfa/mfa.module';
import { PasswordLogin } from './password-login';

/** The steps of a password login (the password grant in TokensModule runs them). */
@Module({
  imports: [IdentityModule, LockoutModule, MfaModule],
  providers: [PasswordLogin],
  exports: [PasswordLogin],
})
export class LoginModule {}
