import { toJwks } from '@acct/grpc';
import { Controller, Get, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { Public } from '../auth/access.decorators';
import { AuthBackend } from '../backends/backends.module';
import { GatewayIdentity } from '../backends/gateway-identity';
import { clientAddress } from '../http/client-address';
import { ApiJsonBody, ApiJsonResponse, ApiProblems, header } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { tokenParameters } from './token-request';
import { tokenRequest } from './token-request.schema';
import { jsonWebKeySet, TokenSet, tokenSet } from './token-set.schema';

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? '';

/**
 * The device credential auth issues at a successful password login (a response header: the token set's
 * fields are fixed by the interface) and the client sends back on later logins.
 */
export const DEVICE_TOKEN_HEADER = 'X-Device-Token';
/** Far above a genuine credential: a longer value is no credential (auth refuses it anyway). */
export const MAX_DEVICE_TOKEN_LENGTH = 2048;

@ApiTags('tokens')
@Controller('v2/auth')
export class TokenController {
  constructor(
    private readonly auth: AuthBackend,
    private readonly gateway: GatewayIdentity,
  ) {}

  /** `POST /v2/auth/token`: the only unauthenticated write (interface §4.2, contract §4). */
  @Post('token')
  @Public()
  @RateLimited('auth')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'issueToken',
    summary: 'Issue an access token (authorization_code, password, client_credentials or refresh_token grant)',
    description:
      'The only unauthenticated write. JSON or form-encoded; client credentials may come with HTTP Basic ' +
      '(RFC 6749 §2.3.1). Rate limited per IP (`auth` group); 5 failed logins for a (username, IP) pair ' +
      'lock it for 15 minutes (429 `login_locked`); an account with two-step verification needs `mfa_code` ' +
      '(403 `mfa_required`). Errors also carry RFC 6749 `error` and `error_description`.',
  })
  @ApiHeader({ name: 'X-Device-Id', required: false, description: 'Device fingerprint, recorded in the login audit.' })
  @ApiHeader({
    name: DEVICE_TOKEN_HEADER,
    required: false,
    description:
      'The device credential a successful password login of this account returned (the response header of ' +
      'the same name): the device is then exempt from the account-wide ceiling on failed logins.',
  })
  @ApiJsonBody(tokenRequest, { formEncoded: true })
  @ApiJsonResponse(200, 'The token set.', tokenSet, {
    'Cache-Control': header('`no-store` (RFC 6749 §5.1)'),
    // Not required: the other grants' answers have none, and a client told it is always there fails on them.
    [DEVICE_TOKEN_HEADER]: header(
      'Password grant only: a device credential for this account (90 days), to send back as the request ' +
        'header of the same name on later logins.',
      { type: 'string' },
      false,
    ),
  })
  @ApiProblems(
    'malformed_body',
    'invalid_request',
    'unsupported_grant_type',
    'invalid_scope',
    'invalid_grant',
    'account_not_active',
    'account_disabled',
    'invalid_client',
    'unauthorized_client',
    'mfa_required',
    'payload_too_large',
    'unsupported_media_type',
    'login_locked',
    'service_unavailable',
  )
  async token(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<TokenSet> {
    const parameters = tokenParameters(request);
    const issued = await this.gateway.call('issueToken', {
      grantType: parameters.grant_type,
      username: parameters.username,
      password: parameters.password,
      scope: parameters.scope,
      mfaCode: parameters.mfa_code,
      clientId: parameters.client_id,
      clientSecret: parameters.client_secret,
      refreshToken: parameters.refresh_token,
      code: parameters.code,
      redirectUri: parameters.redirect_uri,
      codeVerifier: parameters.code_verifier,
      clientIp: clientAddress(request),
      deviceId: headerValue(request.headers['x-device-id']).slice(0, 200),
      userAgent: headerValue(request.headers['user-agent']).slice(0, 400),
      deviceToken: headerValue(request.headers['x-device-token']).slice(0, MAX_DEVICE_TOKEN_LENGTH),
    });
    void reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    if (issued.deviceToken) void reply.header(DEVICE_TOKEN_HEADER, issued.deviceToken);
    return {
      access_token: issued.accessToken,
      ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
      token_type: issued.tokenType as TokenSet['token_type'],
      expires_in: issued.expiresIn,
      scope: issued.scope,
    };
  }

  /** The public keys that verify access tokens (RFC 7517). */
  @Get('jwks')
  @Public()
  @RateLimited('default')
  @ApiOperation({ operationId: 'getJwks', summary: 'The public keys that verify access tokens (JWKS)' })
  @ApiJsonResponse(200, 'The current signing keys and those of tokens still valid.', jsonWebKeySet, {
    'Cache-Control': header('`public, max-age=60`'),
  })
  @ApiProblems('service_unavailable')
  @Header('Cache-Control', 'public, max-age=60')
  async jwks() {
    return toJwks(await this.auth.call('getJwks', {}));
  }
}
