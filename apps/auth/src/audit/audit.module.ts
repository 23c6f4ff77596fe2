import { Module } from '@nestjs/common';

import { IdentityModule } from '../identity/identity.module';
import { PrismaModule } from '../prisma/prisma.service';
import { AdminAudit } from './admin-audit';
import { AdminAuditRepository } from './admin-audit.repository';
import { AdminAuditEventsConsumer } from './admin-audit-events.consumer';
import { LoginAudit } from './login-audit';
import { LoginAuditGrpcController } from './login-audit.grpc-controller';
import { LoginAuditRepository } from './login-audit.repository';

/**
 * The login audit (recorded by the token endpoint) and the admin-action audit (recorded by auth's admin
 * operations and from identity's events), read by the org's admins.
 */
@Module({
  imports: [PrismaModule, IdentityModule],
  controllers: [LoginAuditGrpcController],
  providers: [LoginAuditRepository, LoginAudit, AdminAuditRepository, AdminAudit, AdminAuditEventsConsumer],
  exports: [LoginAudit, AdminAudit],
})
export class AuditModule {}
