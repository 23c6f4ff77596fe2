import { authV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { SessionsService } from './sessions.service';

type Methods = 'listUserSessions' | 'revokeUserSession' | 'revokeUserSessions';

/** A user's sessions over gRPC; every rule is SessionsService's. */
@Controller()
export class SessionsGrpcController implements Pick<authV1.AuthServiceController, Methods> {
  constructor(private readonly sessions: SessionsService) {}

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'listUserSessions')
  async listUserSessions(
    request: authV1.ListUserSessionsRequest,
    metadata?: Metadata,
  ): Promise<authV1.ListUserSessionsResponse> {
    const sessions = await this.sessions.list(callerOf(metadata), bearerTokenOf(metadata) ?? '', request.userId);
    return {
      sessions: sessions.map((session) => ({
        id: session.id,
        clientId: session.clientId,
        createdAt: session.createdAt.toISOString(),
        lastUsedAt: session.lastUsedAt.toISOString(),
        ip: session.origin.ip,
        deviceId: session.origin.deviceId,
        userAgent: session.origin.userAgent,
      })),
    };
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'revokeUserSession')
  async revokeUserSession(
    request: authV1.RevokeUserSessionRequest,
    metadata?: Metadata,
  ): Promise<authV1.RevokeUserSessionResponse> {
    await this.sessions.revoke(callerOf(metadata), bearerTokenOf(metadata) ?? '', request.userId, request.sessionId);
    return {};
  }

  @GrpcMethod(authV1.AUTH_SERVICE_NAME, 'revokeUserSessions')
  async revokeUserSessions(
    request: authV1.RevokeUserSessionsRequest,
    metadata?: Metadata,
  ): Promise<authV1.RevokeUserSessionsResponse> {
    const revokedSessions = await this.sessions.revokeAll(
      callerOf(metadata),
      bearerTokenOf(metadata) ?? '',
      request.userId,
    );
    return { revokedSessions };
  }
}
