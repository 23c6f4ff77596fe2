import { Controller, Delete, HttpCode, Param, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { AuthBackend } from '../backends/backends.module';
import { refuseBody } from '../http/request-body';
import { ApiProblems } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';

/**
 * An admin's unlock (contract §7): the user's failed-login locks are forgotten. Auth owns every rule
 * (admin of the user's org; another org's user is 404) and audits the action.
 */
@ApiTags('users')
@Controller('v2/users/:id/lockout')
export class LockoutController {
  constructor(private readonly auth: AuthBackend) {}

  @Delete()
  @HttpCode(204)
  @RequireScope('users:write')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'clearUserLockout',
    summary: "Unlock a user (admins): clear its failed-login lockouts and its account's ceiling",
    description:
      'Every (username, IP) lock of the user, by e-mail or phone, and its account-wide ceiling are cleared; ' +
      'the next login is counted afresh. Answers 204 also when nothing was locked. Another org’s user is 404.',
  })
  @ApiNoContentResponse({ description: 'Unlocked.' })
  @ApiProblems('validation_failed', 'forbidden', 'not_found', 'service_unavailable')
  async clear(@Req() request: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    refuseBody(request);
    await this.auth.call('clearUserLockout', { userId: id }, { accessToken: request.accessToken });
  }
}
