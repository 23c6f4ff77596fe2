import { DomainError } from '@acct/problem';
import { Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { Public, RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { oneTimeBearerToken } from '../auth/one-time-token';
import { IdentityBackend } from '../backends/backends.module';
import { jsonObjectBody } from '../http/request-body';
import { parseOrFail } from '../http/validation';
import { ApiJsonBody, ApiJsonResponse, ApiProblems, header } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import {
  OneTimeToken,
  oneTimeToken,
  ResetAccepted,
  resetAccepted,
  resetPasswordBody,
  setPasswordBody,
} from './password.schema';
import { userAnswer, UserResource, userResource } from './user.resource';

/** Activation and password reset (contract §3). */
@ApiTags('users')
@Controller('v2/users')
export class PasswordController {
  constructor(private readonly identity: IdentityBackend) {}

  /**
   * Sets the password with the one-time password:set token from the e-mail link (or the reset
   * operation) as the bearer credential; a pending user becomes active. The token is opaque, not an
   * access token, so the route is public here and identity checks and consumes the token.
   */
  @Post('me/password')
  @Public()
  @RateLimited('users.write')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'setPassword',
    summary: 'Set the password with the one-time token; a pending user becomes active',
    description:
      'The bearer credential is the one-time `password:set` token from the activation e-mail or the reset ' +
      'operation (not an access token); it is consumed, a second use is 401. The page `GET /activate` does this in a browser.',
  })
  @ApiSecurity('oneTimeToken')
  @ApiJsonBody(setPasswordBody, { name: 'SetPasswordRequest' })
  @ApiJsonResponse(200, 'The user, now `active`.', userResource, {
    ETag: header('The strong entity tag of the user.'),
  })
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'unauthenticated',
    'payload_too_large',
    'unsupported_media_type',
    'service_unavailable',
  )
  async setPassword(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UserResource> {
    const token = oneTimeBearerToken(request);
    if (!token) {
      throw new DomainError('unauthenticated', 'This operation needs the one-time token from the e-mail link.', {
        headers: { 'WWW-Authenticate': 'Bearer realm="account-platform", error="invalid_token"' },
      });
    }
    const { password } = parseOrFail(setPasswordBody, jsonObjectBody(request));
    const { user } = await this.identity.call('setPassword', { token, password });
    return userAnswer(reply, user);
  }

  /** `send_email: true` (default) → 202 and an e-mail; `false` → 200 `{token, expires_at}`. */
  @Post(':id/reset-password')
  @HttpCode(200)
  @RequireScope('users:write')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'resetPassword',
    summary: 'Start a password reset (or get the activation token of a user created without e-mail)',
  })
  @ApiJsonBody(resetPasswordBody, { name: 'ResetPasswordRequest', required: false })
  @ApiJsonResponse(200, '`send_email: false`: the one-time token, for the caller to deliver.', oneTimeToken, {
    'Cache-Control': header('`no-store`: the answer holds a credential.'),
  })
  @ApiJsonResponse(202, '`send_email: true` (default): an e-mail with the link is on its way.', resetAccepted)
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'forbidden',
    'not_found',
    'payload_too_large',
    'unsupported_media_type',
    'service_unavailable',
  )
  async resetPassword(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<OneTimeToken | ResetAccepted> {
    const body = parseOrFail(resetPasswordBody, request.body === undefined ? {} : jsonObjectBody(request));
    const sendEmail = body.send_email ?? true;
    const answer = await this.identity.call(
      'requestPasswordReset',
      { userId: id, sendEmail },
      { accessToken: request.accessToken },
    );
    if (sendEmail) {
      void reply.status(202);
      return {};
    }
    // A credential in the body: no cache along the way may keep it (as RFC 6749 §5.1 asks of tokens).
    void reply.header('Cache-Control', 'no-store');
    return { token: answer.token, expires_at: answer.expiresAt };
  }
}
