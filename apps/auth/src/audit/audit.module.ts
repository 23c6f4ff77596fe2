import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { LoginAudit } from './login-audit';
import { LoginAuditGrpcController } from './login-audit.grpc-controller';
import { LoginAuditRepository } from './login-audit.repository';

/** The login audit: recorded by the token endpoint, read by the org's admins. */
@Module({
  imports: [PrismaModule],
  controllers: [LoginAuditGrpcController],
  providers: [LoginAuditRepository, LoginAudit],
  exports: [LoginAudit],
})
export class AuditModule {}
