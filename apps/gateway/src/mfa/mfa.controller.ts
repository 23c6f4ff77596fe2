import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { AuthBackend } from '../backends/backends.module';
import { jsonObjectBody } from '../http/request-body';
import { parseOrFail } from '../http/validation';
import { ApiJsonBody, ApiJsonResponse, ApiProblems, header } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { Confirmation, confirmation, confirmBody, enrollBody, Enrolment, enrolment } from './mfa.schema';

/**
 * Two-step verification of the signed-in user (contract §4): TOTP enrolment and confirmation. The
 * user is the token's subject; auth owns the secrets and every rule. Same scope as `/v2/users/me`.
 */
@ApiTags('users')
@Controller('v2/users/me/mfa/totp')
export class MfaController {
  constructor(private readonly auth: AuthBackend) {}

  /** 201 `{secret, otpauth_uri}` (no body, or `{}`); 409 `mfa_already_enabled` once confirmed. */
  @Post()
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @RequireScope('users:read')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'enrollTotp',
    summary: 'Start two-step verification: a new TOTP secret for the signed-in user',
    description:
      'Needs the current password (a wrong one is 403 `forbidden`; 5 wrong ones lock enrolment for 15 minutes, ' +
      '429 `login_locked`). Replaces a secret not yet confirmed. Users only (a client token is 403 `forbidden`).',
  })
  @ApiJsonBody(enrollBody, { name: 'TotpEnrolmentRequest' })
  @ApiJsonResponse(201, 'The base32 secret and its `otpauth://` URI (for a QR code).', enrolment, {
    'Cache-Control': header('`no-store`'),
  })
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'forbidden',
    'mfa_already_enabled',
    'payload_too_large',
    'unsupported_media_type',
    'login_locked',
    'service_unavailable',
  )
  async enroll(@Req() request: AuthenticatedRequest): Promise<Enrolment> {
    const { password } = parseOrFail(enrollBody, jsonObjectBody(request));
    const enrolled = await this.auth.call('enrollTotp', { password }, { accessToken: request.accessToken });
    return { secret: enrolled.secret, otpauth_uri: enrolled.otpauthUri };
  }

  /** 200 `{enabled: true, confirmed_at}`; 400 `invalid_mfa_code` for a wrong code. */
  @Post('confirm')
  @HttpCode(200)
  @RequireScope('users:read')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'confirmTotp',
    summary: 'Turn two-step verification on with a code of the new secret',
    description: 'From then on a password login needs `mfa_code` (403 `mfa_required` without it).',
  })
  @ApiJsonBody(confirmBody, { name: 'TotpConfirmationRequest' })
  @ApiJsonResponse(200, 'Two-step verification is on.', confirmation)
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'invalid_mfa_code',
    'forbidden',
    'mfa_already_enabled',
    'mfa_not_enrolled',
    'payload_too_large',
    'unsupported_media_type',
    'service_unavailable',
  )
  async confirm(@Req() request: AuthenticatedRequest): Promise<Confirmation> {
    const { code } = parseOrFail(confirmBody, jsonObjectBody(request));
    const confirmed = await this.auth.call('confirmTotp', { code }, { accessToken: request.accessToken });
    return { enabled: confirmed.enabled as Confirmation['enabled'], confirmed_at: confirmed.confirmedAt };
  }
}
