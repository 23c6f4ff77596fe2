import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import { z } from 'zod';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { AuthBackend } from '../backends/backends.module';
import { jsonObjectBody } from '../http/request-body';
import { parseOrFail } from '../http/validation';

const enrollBody = z.object({}).strict();
const confirmBody = z.object({ code: z.string().regex(/^\d{6}$/, 'must be 6 digits') }).strict();

/**
 * Two-step verification of the signed-in user (contract §4): TOTP enrolment and confirmation. The
 * user is the token's subject; auth owns the secrets and every rule. Same scope as `/v2/users/me`.
 */
@Controller('v2/users/me/mfa/totp')
export class MfaController {
  constructor(private readonly auth: AuthBackend) {}

  /** 201 `{secret, otpauth_uri}` (no body, or `{}`); 409 `mfa_already_enabled` once confirmed. */
  @Post()
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @RequireScope('users:read')
  async enroll(@Req() request: AuthenticatedRequest): Promise<{ secret: string; otpauth_uri: string }> {
    if (request.body !== undefined) parseOrFail(enrollBody, jsonObjectBody(request));
    const enrolled = await this.auth.call('enrollTotp', {}, { accessToken: request.accessToken });
    return { secret: enrolled.secret, otpauth_uri: enrolled.otpauthUri };
  }

  /** 200 `{enabled: true, confirmed_at}`; 400 `invalid_mfa_code` for a wrong code. */
  @Post('confirm')
  @HttpCode(200)
  @RequireScope('users:read')
  async confirm(@Req() request: AuthenticatedRequest): Promise<{ enabled: boolean; confirmed_at: string }> {
    const { code } = parseOrFail(confirmBody, jsonObjectBody(request));
    const confirmed = await this.auth.call('confirmTotp', { code }, { accessToken: request.accessToken });
    return { enabled: confirmed.enabled, confirmed_at: confirmed.confirmedAt };
  }
}
