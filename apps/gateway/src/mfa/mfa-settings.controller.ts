import { Controller, Delete, Header, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { AuthBackend } from '../backends/backends.module';
import { jsonObjectBody } from '../http/request-body';
import { parseOrFail } from '../http/validation';
import { ApiJsonBody, ApiJsonResponse, ApiProblems, header } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { RecoveryCodes, recoveryCodes, recoveryCodesBody, removeMfaBody } from './mfa.schema';

/**
 * Removing a second factor and recovery codes (contract §7). Auth owns every rule: the user itself
 * proves its password and a current code; an admin of the user's org needs neither (audited); another
 * org's user is 404.
 */
@ApiTags('users')
@Controller('v2/users')
export class MfaSettingsController {
  constructor(private readonly auth: AuthBackend) {}

  @Delete(':id/mfa')
  @HttpCode(204)
  @RequireScope('users:read')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'removeUserMfa',
    summary: 'Turn two-step verification off: remove the TOTP secret and recovery codes',
    description:
      'The user itself (`me`) sends `{password, mfa_code}`: a wrong password is 403 `forbidden`, a wrong or ' +
      'used code 400 `invalid_mfa_code` (`mfa_code` may be an unused recovery code); 5 failures lock these ' +
      "settings for 15 minutes (429 `login_locked`). An admin of the user's org (users:write) removes another " +
      "user's without a body. Answers 204 also when two-step verification was off.",
  })
  @ApiJsonBody(removeMfaBody, { name: 'MfaRemovalRequest', required: false })
  @ApiNoContentResponse({ description: 'Two-step verification is off.' })
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'invalid_mfa_code',
    'forbidden',
    'not_found',
    'payload_too_large',
    'unsupported_media_type',
    'login_locked',
    'service_unavailable',
  )
  async remove(@Req() request: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    const body = parseOrFail(removeMfaBody, request.body === undefined ? {} : jsonObjectBody(request));
    await this.auth.call(
      'removeUserMfa',
      { userId: id, password: body.password ?? '', mfaCode: body.mfa_code ?? '' },
      { accessToken: request.accessToken },
    );
  }

  @Post('me/mfa/recovery-codes')
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @RequireScope('users:read')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'createRecoveryCodes',
    summary: 'New recovery codes for the signed-in user: 10 single-use codes, replacing the old ones',
    description:
      'Needs the current password (a wrong one is 403 `forbidden`; 5 failures lock for 15 minutes, 429 ' +
      '`login_locked`) and two-step verification on (409 `mfa_not_enrolled`). The codes are shown once; each ' +
      'works once as `mfa_code` at the token endpoint or the login page. Earlier codes stop working.',
  })
  @ApiJsonBody(recoveryCodesBody, { name: 'RecoveryCodesRequest' })
  @ApiJsonResponse(201, 'The codes, shown this once.', recoveryCodes, { 'Cache-Control': header('`no-store`') })
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'forbidden',
    'mfa_not_enrolled',
    'payload_too_large',
    'unsupported_media_type',
    'login_locked',
    'service_unavailable',
  )
  async createRecoveryCodes(@Req() request: AuthenticatedRequest): Promise<RecoveryCodes> {
    const { password } = parseOrFail(recoveryCodesBody, jsonObjectBody(request));
    const created = await this.auth.call('createRecoveryCodes', { password }, { accessToken: request.accessToken });
    return { codes: created.codes, created_at: created.createdAt };
  }
}
