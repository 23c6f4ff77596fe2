import { Module } from '@nestjs/common';

import { OAuthClientsModule } from '../clients/clients.module';
import { MfaModule } from '../mfa/mfa.module';
import { RefreshModule } from '../refresh/refresh.module';
import { SessionsModule } from '../sessions/sessions.module';
import { RequesterAuthentication } from './requester';
import { RevocationGrpcController } from './revocation.grpc-controller';
import { SessionEndingEventsConsumer } from './session-ending-events.consumer';
import { TokenIntrospectionService } from './token-introspection.service';
import { TokenRevocationService } from './token-revocation.service';

/** RFC 7009 revocation, RFC 7662 introspection, ending a user's sessions (on request or on an event). */
@Module({
  imports: [RefreshModule, OAuthClientsModule, MfaModule, SessionsModule],
  providers: [RequesterAuthentication, TokenRevocationService, TokenIntrospectionService, SessionEndingEventsConsumer],
  controllers: [RevocationGrpcController],
  exports: [TokenRevocationService, TokenIntrospectionService],
})
export class TokenRevocationModule {}
