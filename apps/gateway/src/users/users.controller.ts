import { Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { IdentityBackend } from '../backends/backends.module';
import { requestFingerprint } from '../http/fingerprint';
import { jsonObjectBody } from '../http/request-body';
import { parseOrFail } from '../http/validation';
import { createUserBody, idempotencyKey } from './create-user.schema';
import { toUserResource, UserResource } from './user.resource';

/** `/v2/users`: maps HTTP to the identity service, which owns every rule about users. */
@Controller('v2/users')
export class UsersController {
  constructor(private readonly identity: IdentityBackend) {}

  @Post()
  @HttpCode(201)
  @RequireScope('users:write')
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
  me(@Req() request: AuthenticatedRequest): Promise<UserResource> {
    return this.get(request, 'me');
  }

  @Get(':id')
  @RequireScope('users:read')
  byId(@Req() request: AuthenticatedRequest, @Param('id') id: string): Promise<UserResource> {
    return this.get(request, id);
  }

  private async get(request: AuthenticatedRequest, id: string): Promise<UserResource> {
    const { user } = await this.identity.call('getUser', { id }, { accessToken: request.accessToken });
    return toUserResource(user);
  }
}
