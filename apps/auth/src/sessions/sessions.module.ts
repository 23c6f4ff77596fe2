import { Module } from '@nestjs/common';

import { AuditModule } from '../audit/audit.module';
import { IdentityModule } from '../identity/identity.module';
import { RefreshModule } from '../refresh/refresh.module';
import { SessionsGrpcController } from './sessions.grpc-controller';
import { SessionsService } from './sessions.service';

/** A user's sessions (contract §7): listed and revoked by the user itself or an admin of its org. */
@Module({
  imports: [RefreshModule, IdentityModule, AuditModule],
  providers: [SessionsService],
  controllers: [SessionsGrpcController],
  exports: [SessionsService],
})
export class SessionsModule {}
