import { toJwks } from '@acct/grpc';
import { Controller, Get, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { Public } from '../auth/access.decorators';
import { AuthBackend } from '../backends/backends.module';
import { tokenParameters } from './token-request';

/** Interface §2.2. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? '';

@Controller('v2/auth')
export class TokenController {
  constructor(private readonly auth: AuthBackend) {}

  /** `POST /v2/auth/token`: the only unauthenticated write (interface §4.2, contract §4). */
  @Post('token')
  @Public()
  @HttpCode(200)
  async token(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<TokenSet> {
    const parameters = tokenParameters(request);
    const issued = await this.auth.call('issueToken', {
      grantType: parameters.grant_type,
      username: parameters.username,
      password: parameters.password,
      scope: parameters.scope,
      mfaCode: parameters.mfa_code,
      clientId: parameters.client_id,
      clientSecret: parameters.client_secret,
      refreshToken: parameters.refresh_token,
      clientIp: request.ip,
      deviceId: headerValue(request.headers['x-device-id']).slice(0, 200),
      userAgent: headerValue(request.headers['user-agent']).slice(0, 400),
    });
    void reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    return {
      access_token: issued.accessToken,
      ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
      token_type: issued.tokenType,
      expires_in: issued.expiresIn,
      scope: issued.scope,
    };
  }

  /** The public keys that verify access tokens (RFC 7517). */
  @Get('jwks')
  @Public()
  @Header('Cache-Control', 'public, max-age=60')
  async jwks() {
    return toJwks(await this.auth.call('getJwks', {}));
  }
}
