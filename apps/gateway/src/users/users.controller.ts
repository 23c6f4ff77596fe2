import { DomainError } from '@acct/problem';
import { Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { IdentityBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { ifNoneMatchMatches } from '../http/conditional';
import { fingerprintKey, requestFingerprint } from '../http/fingerprint';
import { jsonObjectBody, refuseBody } from '../http/request-body';
import { parseBothOrFail, parseOrFail } from '../http/validation';
import { issuerPath } from '../http/well-known';
import { ApiJsonBody, ApiJsonResponse, ApiKeysetPage, ApiProblems, header } from '../openapi/api.decorators';
import { documented } from '../openapi/api-schemas';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { createUserBody, idempotencyKey, idempotencyKeyHeader } from './create-user.schema';
import {
  ifMatchHolds,
  preconditionsOf,
  toUserResource,
  userAnswer,
  UserPage,
  userPage,
  UserResource,
  userResource,
} from './user.resource';
import { listUsersQuery, patchUserBody } from './user-admin.schema';

const NOT_MODIFIED = {
  status: 304,
  description: 'Not modified: `If-None-Match` names the user’s current ETag (sent again, without a body).',
};
const ETAG = { ETag: header('The strong entity tag of the user; send it back as `If-Match` to change it safely.') };
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  required: false,
  description: 'Answer `304` without a body while the user’s ETag is one of these (or `*`).',
  schema: { type: 'string' as const },
};
const IF_MATCH_READ = {
  name: 'If-Match',
  required: false,
  description: 'Answer only while the user’s ETag is one of these (or `*`); otherwise `412 precondition_failed`.',
  schema: { type: 'string' as const },
};
const IF_NONE_MATCH_CHANGE = {
  name: 'If-None-Match',
  required: false,
  description:
    'Change the user only while its ETag is none of these (`*`: never, it exists); otherwise `412 precondition_failed`.',
  schema: { type: 'string' as const },
};
const IF_MATCH = {
  name: 'If-Match',
  required: false,
  description: 'Change the user only while its ETag is one of these (or `*`); otherwise `412 precondition_failed`.',
  schema: { type: 'string' as const },
};

/** `/v2/users`: maps HTTP to the identity service, which owns every rule about users. */
@ApiTags('users')
@Controller('v2/users')
export class UsersController {
  private readonly fingerprintKey: Buffer;
  /** Where the users are as clients see them: under a proxy's prefix (the issuer's path) when it has one. */
  private readonly usersPath: string;

  constructor(
    private readonly identity: IdentityBackend,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.fingerprintKey = fingerprintKey(config.GATEWAY_CLIENT_SECRET);
    this.usersPath = `${issuerPath(config.TOKEN_ISSUER)}/v2/users`;
  }

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
    ...ETAG,
    Location: header("`/v2/users/{id}`, under the issuer's path when a proxy's prefix puts the gateway under one."),
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
    'phone_taken',
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
    const [body, { 'Idempotency-Key': key }] = parseBothOrFail(
      [createUserBody, raw],
      [idempotencyKeyHeader, { 'Idempotency-Key': request.headers['idempotency-key'] }],
    );
    const { user, replayed } = await this.identity.call(
      'createUser',
      {
        email: body.email,
        displayName: body.display_name,
        password: body.password,
        roles: body.roles ?? [],
        orgId: body.org_id,
        sendActivation: body.send_activation,
        phone: body.phone,
        profile: body.profile,
        idempotencyKey: key,
        requestFingerprint: requestFingerprint(this.fingerprintKey, 'POST', '/v2/users', raw),
      },
      { accessToken: request.accessToken },
    );
    const resource = userAnswer(reply, user);
    // Resolved against the URI the client posted to (RFC 9110 §10.2.2): behind a proxy's prefix a bare
    // `/v2/users/{id}` would leave it, so the prefix is written before it.
    void reply.header('Location', `${this.usersPath}/${resource.id}`);
    if (replayed) void reply.header('Idempotent-Replayed', 'true');
    return resource;
  }

  @Get('me')
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({ operationId: 'getCurrentUser', summary: 'The user the access token belongs to' })
  @ApiJsonResponse(200, 'The caller.', userResource, ETAG)
  @ApiHeader(IF_MATCH_READ)
  @ApiHeader(IF_NONE_MATCH)
  @ApiResponse(NOT_MODIFIED)
  @ApiProblems('not_found', 'precondition_failed', 'service_unavailable')
  me(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UserResource | undefined> {
    return this.get(request, reply, 'me');
  }

  @Get(':id')
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({ operationId: 'getUser', summary: "A user of the caller's org" })
  @ApiJsonResponse(200, 'The user.', userResource, ETAG)
  @ApiHeader(IF_MATCH_READ)
  @ApiHeader(IF_NONE_MATCH)
  @ApiResponse(NOT_MODIFIED)
  @ApiProblems('not_found', 'precondition_failed', 'service_unavailable')
  byId(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<UserResource | undefined> {
    return this.get(request, reply, id);
  }

  @Get()
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({
    operationId: 'listUsers',
    summary: "The org's users, newest first (admins)",
    description:
      '`q` matches an e-mail prefix or a display_name substring, case-insensitive, both in Unicode NFKC ' +
      '(an accent typed as a combining mark, a full-width letter, find the name); `limit` 1–100 (default 20); ' +
      '`cursor` is the `next_cursor` of the previous page. Users created while you page appear on the first page, ' +
      'never in the pages still to come.',
  })
  @ApiQuery({ name: 'status', required: false, schema: { type: 'string', enum: ['pending', 'active', 'disabled'] } })
  @ApiQuery({ name: 'q', required: false, schema: { type: 'string', maxLength: 254 } })
  @ApiKeysetPage(userPage)
  @ApiProblems('validation_failed', 'forbidden', 'service_unavailable')
  async list(@Req() request: AuthenticatedRequest): Promise<UserPage> {
    const query = parseOrFail(listUsersQuery, request.query ?? {});
    const page = await this.identity.call(
      'listUsers',
      { status: query.status ?? '', q: query.q ?? '', limit: query.limit ?? 0, cursor: query.cursor ?? '' },
      { accessToken: request.accessToken },
    );
    return { items: page.users.map(toUserResource), next_cursor: page.nextCursor || null };
  }

  @Patch(':id')
  @RequireScope('users:write')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'updateUser',
    summary: 'Change a user (admins; JSON merge patch)',
    description:
      'Members sent change, members left out stay; `null` removes `phone` and puts `profile.locale` / ' +
      "`profile.timezone` back to their defaults. Same rules as creation, roles at most the caller's own. " +
      "Taking `admin` from the org's last active admin is `409 last_admin`.",
  })
  @ApiHeader(IF_MATCH)
  @ApiHeader(IF_NONE_MATCH_CHANGE)
  @ApiJsonBody(patchUserBody, { name: 'UpdateUserRequest', mergePatch: true })
  @ApiJsonResponse(200, 'The user as it is now.', userResource, ETAG)
  @ApiProblems(
    'malformed_body',
    'validation_failed',
    'forbidden',
    'not_found',
    'phone_taken',
    'last_admin',
    'precondition_failed',
    'payload_too_large',
    'unsupported_media_type',
    'service_unavailable',
  )
  async update(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<UserResource> {
    const body = parseOrFail(patchUserBody, jsonObjectBody(request));
    const patch = (value: string | null | undefined) =>
      value === undefined ? undefined : { value: value ?? undefined };
    // RFC 7396: a null member is removed; the profile's two fields go back to their defaults.
    const profile = body.profile === null ? { locale: null, timezone: null } : body.profile;
    const { user } = await this.identity.call(
      'updateUser',
      {
        id,
        ...preconditionsOf(request.headers),
        displayName: body.display_name,
        roles: body.roles ? { roles: body.roles } : undefined,
        phone: patch(body.phone),
        locale: patch(profile?.locale),
        timezone: patch(profile?.timezone),
      },
      { accessToken: request.accessToken },
    );
    return userAnswer(reply, user);
  }

  @Post(':id/disable')
  @HttpCode(200)
  @RequireScope('users:write')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'disableUser',
    summary: 'Disable a user (admins): it cannot sign in, its tokens are revoked within 1 s',
    description: "An admin cannot disable itself or the org's last active admin (`409 last_admin`).",
  })
  @ApiHeader(IF_MATCH)
  @ApiHeader(IF_NONE_MATCH_CHANGE)
  @ApiJsonResponse(200, 'The user, now `disabled`.', userResource, ETAG)
  @ApiProblems(
    'validation_failed',
    'forbidden',
    'not_found',
    'last_admin',
    'precondition_failed',
    'service_unavailable',
  )
  async disable(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<UserResource> {
    refuseBody(request);
    const { user } = await this.identity.call(
      'disableUser',
      {
        id,
        ...preconditionsOf(request.headers),
      },
      { accessToken: request.accessToken },
    );
    return userAnswer(reply, user);
  }

  @Post(':id/enable')
  @HttpCode(200)
  @RequireScope('users:write')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'enableUser',
    summary: 'Enable a disabled user (admins)',
    description: 'It is `active` again if it had ever set a password, else `pending`.',
  })
  @ApiHeader(IF_MATCH)
  @ApiHeader(IF_NONE_MATCH_CHANGE)
  @ApiJsonResponse(200, 'The user.', userResource, ETAG)
  @ApiProblems('validation_failed', 'forbidden', 'not_found', 'precondition_failed', 'service_unavailable')
  async enable(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<UserResource> {
    refuseBody(request);
    const { user } = await this.identity.call(
      'enableUser',
      {
        id,
        ...preconditionsOf(request.headers),
      },
      { accessToken: request.accessToken },
    );
    return userAnswer(reply, user);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('users:write')
  @RateLimited('users.write')
  @ApiOperation({
    operationId: 'deleteUser',
    summary: 'Delete a user (admins): its e-mail and phone are free again, its tokens revoked within 1 s',
    description: "An admin cannot delete itself or the org's last active admin (`409 last_admin`).",
  })
  @ApiHeader(IF_MATCH)
  @ApiHeader(IF_NONE_MATCH_CHANGE)
  @ApiResponse({ status: 204, description: 'Deleted.' })
  @ApiProblems(
    'validation_failed',
    'forbidden',
    'not_found',
    'last_admin',
    'precondition_failed',
    'service_unavailable',
  )
  async delete(@Req() request: AuthenticatedRequest, @Param('id') id: string): Promise<void> {
    refuseBody(request);
    await this.identity.call(
      'deleteUser',
      {
        id,
        ...preconditionsOf(request.headers),
      },
      { accessToken: request.accessToken },
    );
  }

  /**
   * The user, or `304` with its ETag and no body when `If-None-Match` names its current tag (RFC 9110
   * §13.2.1: a server that sends an ETag evaluates the condition): a client revalidating its copy.
   * `If-Match` is judged first (§13.2.2): one that does not name the current tag is `412`, on a read
   * as on a change (contract §7; §13.1.1: an origin server evaluates it before performing the method).
   */
  private async get(request: AuthenticatedRequest, reply: FastifyReply, id: string): Promise<UserResource | undefined> {
    const { user } = await this.identity.call('getUser', { id }, { accessToken: request.accessToken });
    if (user?.etag && !ifMatchHolds(request.headers['if-match'], user.etag)) {
      throw new DomainError(
        'precondition_failed',
        'The user has changed since you read it (If-Match no longer matches its ETag); read it again.',
      );
    }
    const resource = userAnswer(reply, user);
    if (user?.etag && ifNoneMatchMatches(request.headers['if-none-match'], `"${user.etag}"`)) {
      void reply.status(304);
      return undefined;
    }
    return resource;
  }
}
