import { authV1 } from '@acct/contracts';
import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { Public } from '../auth/access.decorators';
import { AuthBackend } from '../backends/backends.module';
import { ApiJsonBody, ApiJsonResponse, ApiProblems, header } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { clientRequestParameters, oauthError } from '../tokens/token-request';
import { Introspection, introspection, introspectionRequest, revocationRequest } from './token-revocation.schemas';

const FIELDS = ['token', 'token_type_hint'] as const;
/**
 * A token of any length: one this server did not issue (another issuer's, garbage) is revoked with 200
 * (RFC 7009 §2.2) and introspected as `{"active": false}` (RFC 7662 §2.2), not refused for its length.
 * Auth quotes no token in its errors, so none can swell its gRPC metadata.
 */
const UNBOUNDED = new Set(['token'] as const);

/** What revocation and introspection answer besides their result: the same client request, refused. */
const CLIENT_REQUEST_PROBLEMS = [
  'malformed_body',
  'validation_failed',
  'invalid_request',
  'invalid_client',
  'payload_too_large',
  'unsupported_media_type',
  'service_unavailable',
] as const;

/** The request's token and client, as auth's RevokeToken and IntrospectToken take them. */
function tokenRequest(request: FastifyRequest) {
  const parameters = clientRequestParameters(request, FIELDS, UNBOUNDED);
  if (!parameters.token) throw oauthError('invalid_request', 'The token parameter is required.');
  return {
    token: parameters.token,
    tokenTypeHint: parameters.token_type_hint,
    clientId: parameters.client_id,
    clientSecret: parameters.client_secret,
  };
}

/** RFC 7662 members of an active token; only `active` for any other. */
function introspectionOf(answer: authV1.IntrospectTokenResponse): Introspection {
  if (!answer.active) return { active: false };
  const members: Introspection = { active: true };
  const set = <K extends keyof Introspection>(key: K, value: Introspection[K] | '' | 0) => {
    if (value !== '' && value !== 0 && value !== undefined) members[key] = value;
  };
  set('scope', answer.scope);
  set('client_id', answer.clientId);
  set('sub', answer.sub);
  set('exp', Number(answer.exp));
  set('iat', Number(answer.iat));
  set('iss', answer.iss);
  set('aud', answer.aud);
  set('jti', answer.jti);
  set('token_type', answer.tokenType as Introspection['token_type']);
  set('org_id', answer.orgId);
  return members;
}

/**
 * `POST /v2/auth/revoke` (RFC 7009) and `POST /v2/auth/introspect` (RFC 7662), contract §6: JSON or
 * form-encoded, client credentials in the body or with HTTP Basic; auth decides everything.
 */
@ApiTags('tokens')
@Controller('v2/auth')
export class TokenRevocationController {
  constructor(private readonly auth: AuthBackend) {}

  @Post('revoke')
  @Public()
  @RateLimited('auth')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'revokeToken',
    summary: 'Revoke an access or refresh token (RFC 7009)',
    description:
      'Client authentication (HTTP Basic or client_secret), or client_id alone for a public client. ' +
      '`200` with an empty body for any well-formed request, unknown tokens included.',
  })
  @ApiJsonBody(revocationRequest, { formEncoded: true })
  @ApiResponse({ status: 200, description: 'Revoked (or nothing to revoke); an empty body.' })
  @ApiProblems(...CLIENT_REQUEST_PROBLEMS)
  async revoke(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    await this.auth.call('revokeToken', tokenRequest(request));
    return reply.status(200).header('Cache-Control', 'no-store').send();
  }

  @Post('introspect')
  @Public()
  @RateLimited('auth')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'introspectToken',
    summary: 'Introspect an access or refresh token (RFC 7662; confidential clients)',
  })
  @ApiJsonBody(introspectionRequest, { formEncoded: true })
  @ApiJsonResponse(200, 'Whether the token is active, and if so what it carries.', introspection, {
    'Cache-Control': header('`no-store`'),
  })
  @ApiProblems(...CLIENT_REQUEST_PROBLEMS)
  async introspect(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const answer = await this.auth.call('introspectToken', tokenRequest(request));
    void reply.header('Cache-Control', 'no-store');
    return introspectionOf(answer);
  }
}
