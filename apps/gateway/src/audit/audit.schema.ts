import { z } from 'zod';

import { pageQuery } from '../http/page-query';

/** `GET /v2/audit/logins` query (contract §7). Unknown parameters are ignored. */
export const loginAuditQuery = z.object({
  ...pageQuery,
  user_id: z.uuid('must be a user id').optional(),
  outcome: z.enum(['success', 'failure'], { error: 'must be success or failure' }).optional(),
});

/** `GET /v2/audit/events` query (contract §7). Unknown parameters are ignored. */
export const adminAuditQuery = z.object(pageQuery);

/** One token request of the org's login audit. */
export const loginAuditEntry = z
  .object({
    at: z.iso.datetime(),
    grant_type: z.string().describe('password, client_credentials, refresh_token, authorization_code, …'),
    username: z.string().nullable().describe('The username of a password login, lower-cased; null for other grants.'),
    subject: z.string().nullable().describe('The user (or client) the request was for, when known.'),
    client_id: z.string().nullable(),
    ip: z.string().nullable(),
    device_id: z.string().nullable(),
    user_agent: z.string().nullable(),
    outcome: z.enum(['success', 'failure']),
    reason: z.string().describe('`issued`, or the error code of the refusal (invalid_grant, login_locked, …).'),
  })
  .strict();
export const loginAuditPage = z
  .object({ items: z.array(loginAuditEntry), next_cursor: z.string().nullable() })
  .strict();
export type LoginAuditPage = z.output<typeof loginAuditPage>;

/** One admin action of the org: who, what, target, when, request id. */
export const adminAuditEntry = z
  .object({
    id: z.uuid(),
    at: z.iso.datetime(),
    actor_id: z.string().nullable().describe('The user (or client) who acted.'),
    action: z.string().describe('user.created, user.updated, user.disabled, user.enabled, user.deleted, …'),
    target: z.object({ type: z.enum(['user', 'session']), id: z.string() }).strict(),
    request_id: z.string().nullable().describe('The X-Request-Id of the request.'),
    details: z
      .record(z.string(), z.union([z.string(), z.array(z.string())]))
      .nullable()
      .describe('What changed (`changed` field names, `roles_before`, `roles_after`, …).'),
  })
  .strict();
export const adminAuditPage = z
  .object({ items: z.array(adminAuditEntry), next_cursor: z.string().nullable() })
  .strict();
export type AdminAuditPage = z.output<typeof adminAuditPage>;
