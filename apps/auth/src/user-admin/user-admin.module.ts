import { Module } from '@nestjs/common';

import { AuditModule } from '../audit/audit.module';
import { IdentityModule } from '../identity/identity.module';
import { LockoutModule } from '../lockout/lockout.module';
import { MfaModule } from '../mfa/mfa.module';
import { AdminTarget } from './admin-target';
import { RemoveMfaService } from './remove-mfa.service';
import { UnlockUserService } from './unlock-user.service';
import { UserAdminGrpcController } from './user-admin.grpc-controller';

/** Contract §7's admin actions on a user's sign-in: unlock, and MFA removal (also by the user itself); both audited. */
@Module({
  imports: [IdentityModule, LockoutModule, MfaModule, AuditModule],
  providers: [AdminTarget, UnlockUserService, RemoveMfaService],
  controllers: [UserAdminGrpcController],
})
export class UserAdminModule {}
