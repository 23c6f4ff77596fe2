import { Caller, requireScope, USERS_READ_SCOPE } from '@acct/access-token';
import { Clock } from '@acct/clock';
import { authV1 } from '@acct/contracts';
import { DomainError, escapeControlCharacters } from '@acct/problem';
import { Injectable, Logger } from '@nestjs/common';

import { IdentityClient, requireStillAdmin } from '../identity/identity.client';
import { AUTHORIZE } from '../metrics/auth-metrics';
import { decodeCursor, pageOf, pageSize } from './audit-cursor';
import { LoginAuditRepository } from './login-audit.repository';

/** What the audit keeps of a token request (never its secrets: password, client secret, refresh token). */
export interface AuditedRequest {
  grantType: string;
  username: string;
  clientId: string;
  clientIp: string;
  deviceId: string;
  userAgent: string;
}

/** What was sent, storable and readable: control characters escaped (`\\u0000`), then cut to `max`. */
const safe = (value: string, max: number) => escapeControlCharacters(value).slice(0, max);

/** Requests whose username is recorded: the password grant and the login page's sign-in. */
const PASSWORD_LOGINS = new Set(['password', AUTHORIZE]);

export interface AuditOutcome {
  outcome: 'success' | 'failure';
  reason: string;
  subject?: string;
  orgId?: string;
}

/**
 * The login audit (contract §4): every token request with time, username or subject, client, IP,
 * X-Device-Id, user agent, outcome and reason. Recording never fails a token request; secrets
 * (passwords, client secrets, refresh tokens) are never recorded.
 */
@Injectable()
export class LoginAudit {
  private readonly logger = new Logger('login-audit');

  constructor(
    private readonly repository: LoginAuditRepository,
    private readonly identity: IdentityClient,
    private readonly clock: Clock,
  ) {}

  async record(request: AuditedRequest, result: AuditOutcome): Promise<void> {
    try {
      await this.repository.add({
        at: this.clock.date(),
        grantType: safe(request.grantType, 40),
        username: PASSWORD_LOGINS.has(request.grantType)
          ? // Escaped before it is trimmed, so a control character at either end (U+0085 is white space to
            // trim) stays visible, and only once: a second escape would double every backslash again.
            escapeControlCharacters(request.username).trim().toLowerCase().slice(0, 320)
          : '',
        subject: result.subject ?? null,
        orgId: result.orgId ?? null,
        clientId: safe(request.clientId, 200),
        clientIp: safe(request.clientIp, 64),
        deviceId: safe(request.deviceId, 200),
        userAgent: safe(request.userAgent, 400),
        outcome: result.outcome,
        reason: result.reason,
      });
    } catch (error) {
      this.logger.error(`could not record a token request: ${(error as Error).message}`);
    }
  }

  /** The caller's org's entries, newest first, one page; only for callers holding the admin role. */
  async list(
    caller: Caller,
    callerToken: string,
    request: authV1.ListLoginAuditRequest,
  ): Promise<authV1.ListLoginAuditResponse> {
    requireScope(caller, USERS_READ_SCOPE);
    // As identity says now: a disabled, deleted or demoted admin's token works until its revocation arrives.
    await requireStillAdmin(this.identity, caller, callerToken, "Only the org's admins may read the login audit.");
    const size = pageSize(request.limit);
    if (request.outcome && request.outcome !== 'success' && request.outcome !== 'failure') {
      throw new DomainError('validation_failed', 'outcome must be success or failure.', {
        errors: [{ field: 'outcome', message: 'must be success or failure' }],
      });
    }
    // Identity reads a user id in any letter case; entries are kept under the lower-case id.
    const rows = await this.repository.listForOrg(
      caller.orgId,
      { subject: request.userId.toLowerCase() || undefined, outcome: request.outcome || undefined },
      decodeCursor(request.cursor),
      size + 1,
    );
    const { rows: page, next } = pageOf(rows, size);
    return {
      entries: page.map((row) => ({
        at: row.at.toISOString(),
        grantType: row.grantType,
        username: row.username,
        subject: row.subject ?? '',
        clientId: row.clientId,
        clientIp: row.clientIp,
        deviceId: row.deviceId,
        userAgent: row.userAgent,
        outcome: row.outcome,
        reason: row.reason,
      })),
      nextCursor: next,
    };
  }
}
