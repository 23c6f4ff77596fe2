import { Controller, Delete, Get, HttpCode, Param, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { AuthBackend } from '../backends/backends.module';
import { refuseBody } from '../http/request-body';
import { ApiJsonResponse, ApiProblems } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { SessionList, sessionList } from './sessions.schema';

/**
 * A user's sessions (contract §7): `{id}` is a user id or `me`. Auth owns every rule (the user
 * itself, or an admin of its org; another org's user is 404) and revokes a session's access tokens
 * with its refresh tokens (within 1 s everywhere).
 */
@ApiTags('users')
@Controller('v2/users/:id/sessions')
export class SessionsController {
  constructor(private readonly auth: AuthBackend) {}

  @Get()
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({
    operationId: 'listUserSessions',
    summary: "A user's live sessions (refresh families), newest first",
    description: "The user itself (`me`), or an admin of the user's org. `ip`, `device_id`, `user_agent` may be null.",
  })
  @ApiJsonResponse(200, 'The live sessions.', sessionList)
  @ApiProblems('forbidden', 'not_found', 'service_unavailable')
  async list(@Req() request: AuthenticatedRequest, @Param('id') id: string): Promise<SessionList> {
    const { sessions } = await this.auth.call('listUserSessions', { userId: id }, { accessToken: request.accessToken });
    return {
      items: sessions.map((s) => ({
        id: s.id,
        client_id: s.clientId,
        created_at: s.createdAt,
        last_used_at: s.lastUsedAt,
        ip: s.ip || null,
        device_id: s.deviceId || null,
        user_agent: s.userAgent || null,
      })),
    };
  }

  @Delete()
  @HttpCode(204)
  @RequireScope('users:read')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'revokeUserSessions',
    summary: 'End every session of a user',
    description:
      "Its refresh tokens and access tokens stop working within 1 s. Another user's: admin with users:write.",
  })
  @ApiNoContentResponse({ description: 'Ended.' })
  @ApiProblems('validation_failed', 'forbidden', 'not_found', 'service_unavailable')
  async revokeAll(@Req() request: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    refuseBody(request);
    await this.auth.call('revokeUserSessions', { userId: id }, { accessToken: request.accessToken });
  }

  @Delete(':sessionId')
  @HttpCode(204)
  @RequireScope('users:read')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'revokeUserSession',
    summary: 'End one session of a user',
    description: 'Its refresh tokens and the access tokens issued from it stop working within 1 s.',
  })
  @ApiNoContentResponse({ description: 'Ended.' })
  @ApiProblems('validation_failed', 'forbidden', 'not_found', 'service_unavailable')
  async revoke(
    @Req() request: AuthenticatedRequest,
    @Param('id') id: string,
    @Param('sessionId') sessionId: string,
  ): Promise<void> {
    refuseBody(request);
    await this.auth.call('revokeUserSession', { userId: id, sessionId }, { accessToken: request.accessToken });
  }
}
