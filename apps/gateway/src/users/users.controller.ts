import { Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { IdentityBackend } from '../backends/backends.module';
import { requestFingerprint } from '../http/fingerprint';
import { jsonObjectBody } from '../http/request-body';
import { parseOrFail } from '../http/validation';
import { ApiJsonBody, ApiJsonResponse, ApiProblems, header } from '../openapi/api.decorators';
import { documented } from '../openapi/api-schemas';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { createUserBody, idempotencyKey } from './create-user.schema';
import { toUserResource, UserResource, userResource } from './user.resource';

/** `/v2/users`: maps HTTP to the identity service, which owns every rule about users. */
@ApiTags('users')
@Controller('v2/users')
export class UsersController {
  constructor(private readonly identity: IdentityBackend) {}

  @Post()
  @HttpCode(201)
  @RequireScope('users:write')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'createUser',
    summary: 'Create a user (pending until activated)',
    description:
      'E-mail trimmed and unique (case-insensitive), ≤ 254 characters; display_name 1–64 code points, no ' +
      "control characters; password 8–128 characters; roles non-empty, distinct, at most the caller's own; " +
      'profile.locale a BCP 47 tag; profile.timezone an IANA zone. Unknown fields are refused.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'The same key within 24 h returns the stored answer with `Idempotent-Replayed: true`.',
    schema: documented(idempotencyKey),
  })
  @ApiJsonBody(createUserBody, { name: 'CreateUserRequest' })
  @ApiJsonResponse(201, 'The new user, always `pending`.', userResource, {
    Location: header('`/v2/users/{id}`'),
    'Idempotent-Replayed': header(
      '`true` when this is a stored answer to the same Idempotency-Key.',
      { type: 'string', enum: ['true'] },
      false,
    ),
  })
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'forbidden',
    'quota_exceeded',
    'email_taken',
    'idempotency_key_in_use',
    'payload_too_large',
    'unsupported_media_type',
    'idempotency_key_reused',
    'service_unavailable',
  )
  async create(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UserResource> {
    const raw = jsonObjectBody(request);
    const body = parseOrFail(createUserBody, raw);
    const key = parseOrFail(idempotencyKey, request.headers['idempotency-key']);
    const { user, replayed } = await this.identity.call(
      'createUser',
      {
        email: body.email,
        displayName: body.display_name,
        password: body.password,
        roles: body.roles ?? [],
        orgId: body.org_id,
        sendActivation: body.send_activation,
        profile: body.profile,
        idempotencyKey: key,
        requestFingerprint: requestFingerprint('POST', '/v2/users', raw),
      },
      { accessToken: request.accessToken },
    );
    const resource = toUserResource(user);
    void reply.header('Location', `/v2/users/${resource.id}`);
    if (replayed) void reply.header('Idempotent-Replayed', 'true');
    return resource;
  }

  @Get('me')
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({ operationId: 'getCurrentUser', summary: 'The user the access token belongs to' })
  @ApiJsonResponse(200, 'The caller.', userResource)
  @ApiProblems('not_found', 'service_unavailable')
  me(@Req() request: AuthenticatedRequest): Promise<UserResource> {
    return this.get(request, 'me');
  }

  @Get(':id')
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({ operationId: 'getUser', summary: "A user of the caller's org" })
  @ApiJsonResponse(200, 'The user.', userResource)
  @ApiProblems('not_found', 'service_unavailable')
  byId(@Req() request: AuthenticatedRequest, @Param('id') id: string): Promise<UserResource> {
    return this.get(request, id);
  }

  private async get(request: AuthenticatedRequest, id: string): Promise<UserResource> {
    const { user } = await this.identity.call('getUser', { id }, { accessToken: request.accessToken });
    return toUserResource(user);
  }
}
