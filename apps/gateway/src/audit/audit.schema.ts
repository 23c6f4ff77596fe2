import { z } from 'zod';

const LIMIT = 'must be an integer from 1 to 100';

/** `limit` and `cursor` of both audit lists (contract §7). Unknown parameters are ignored. */
const page = {
  limit: z.coerce.number(LIMIT).int(LIMIT).min(1, LIMIT).max(100, LIMIT).optional(),
  cursor: z.string().max(512, 'must be a next_cursor this API returned').optional(),
};

/** `GET /v2/audit/logins` query. */
export const loginAuditQuery = z.object({
  ...page,
  user_id: z.uuid('must be a user id').optional(),
  outcome: z.enum(['success', 'failure'], { error: 'must be success or failure' }).optional(),
});

/** `GET /v2/audit/events` query. */
export const adminAuditQuery = z.object(page);

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
