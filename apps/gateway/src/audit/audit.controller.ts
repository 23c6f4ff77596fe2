import { Controller, Get, Req } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';

import { RequireScope } from '../auth/access.decorators';
import type { AuthenticatedRequest } from '../auth/authenticated-request';
import { AuthBackend } from '../backends/backends.module';
import { parseOrFail } from '../http/validation';
import { ApiKeysetPage, ApiProblems } from '../openapi/api.decorators';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import {
  AdminAuditPage,
  adminAuditPage,
  adminAuditQuery,
  LoginAuditPage,
  loginAuditPage,
  loginAuditQuery,
} from './audit.schema';

const PAGING =
  '`limit` 1–100 (default 20); `cursor` is the `next_cursor` of the previous page (keyset: entries ' +
  'added while you page are on the first page, never skipped or repeated on later ones); `next_cursor` ' +
  'is null on the last page.';

/** The org's audits (contract §7): its admins only (auth checks the role and keeps the org boundary). */
@ApiTags('audit')
@Controller('v2/audit')
export class AuditController {
  constructor(private readonly auth: AuthBackend) {}

  @Get('logins')
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({
    operationId: 'listLoginAudit',
    summary: "The org's login audit, newest first (admins)",
    description:
      "Every token request of the org: successes, and failures of the org's known users (whether they typed " +
      'their e-mail or their phone), clients and refresh tokens. ' +
      PAGING,
  })
  @ApiQuery({ name: 'user_id', required: false, schema: { type: 'string', format: 'uuid' } })
  @ApiQuery({ name: 'outcome', required: false, schema: { type: 'string', enum: ['success', 'failure'] } })
  @ApiKeysetPage(loginAuditPage)
  @ApiProblems('validation_failed', 'forbidden', 'service_unavailable')
  async logins(@Req() request: AuthenticatedRequest): Promise<LoginAuditPage> {
    const query = parseOrFail(loginAuditQuery, request.query ?? {});
    const page = await this.auth.call(
      'listLoginAudit',
      {
        limit: query.limit ?? 0,
        cursor: query.cursor ?? '',
        userId: query.user_id ?? '',
        outcome: query.outcome ?? '',
      },
      { accessToken: request.accessToken },
    );
    return {
      items: page.entries.map((entry) => ({
        at: entry.at,
        grant_type: entry.grantType,
        username: entry.username || null,
        subject: entry.subject || null,
        client_id: entry.clientId || null,
        ip: entry.clientIp || null,
        device_id: entry.deviceId || null,
        user_agent: entry.userAgent || null,
        outcome: entry.outcome === 'success' ? 'success' : 'failure',
        reason: entry.reason,
      })),
      next_cursor: page.nextCursor || null,
    };
  }

  @Get('events')
  @RequireScope('users:read')
  @RateLimited('users.read')
  @ApiOperation({
    operationId: 'listAdminAudit',
    summary: "The org's admin actions, newest first (admins)",
    description:
      'Who did what to which user or session, when, under which request id. Actions done through identity ' +
      '(creating, changing, disabling, enabling, deleting users) are recorded asynchronously from its outbox: ' +
      'they appear within a short delay, and are never lost. ' +
      PAGING,
  })
  @ApiKeysetPage(adminAuditPage)
  @ApiProblems('validation_failed', 'forbidden', 'service_unavailable')
  async events(@Req() request: AuthenticatedRequest): Promise<AdminAuditPage> {
    const query = parseOrFail(adminAuditQuery, request.query ?? {});
    const page = await this.auth.call(
      'listAdminAudit',
      { limit: query.limit ?? 0, cursor: query.cursor ?? '' },
      { accessToken: request.accessToken },
    );
    return {
      items: page.entries.map((entry) => ({
        id: entry.id,
        at: entry.at,
        actor_id: entry.actorId || null,
        action: entry.action,
        target: { type: entry.targetType === 'session' ? 'session' : 'user', id: entry.targetId },
        request_id: entry.requestId || null,
        details: entry.detailsJson ? (JSON.parse(entry.detailsJson) as Record<string, string | string[]>) : null,
      })),
      next_cursor: page.nextCursor || null,
    };
  }
}
