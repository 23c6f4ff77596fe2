import { ROLES } from '@acct/access-token';
import { identityV1 } from '@acct/contracts';
import { EMAIL_SYNTAX } from '@acct/user-fields';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';

import { apiSchemas } from '../openapi/api-schemas';

/** Interface §2.1 and contract §7: the fields of a user a client sees (`phone` only when set). */
export const userResource = z
  .object({
    id: z.string().describe('Server-assigned identifier.'),
    email: z
      .email({ pattern: EMAIL_SYNTAX })
      .describe('Login e-mail as given (trimmed); globally unique, compared case-insensitively.'),
    phone: z
      .string()
      .regex(/^\+[1-9]\d{5,14}$/)
      .optional()
      .describe('Mobile number in E.164, when the user has one; unique; a login username like the e-mail.'),
    display_name: z.string().min(1).max(64).describe('1–64 Unicode code points.'),
    status: z.enum(['pending', 'active', 'disabled']).describe('A `disabled` user cannot sign in.'),
    roles: z.array(z.enum(ROLES)).min(1),
    created_at: z.iso.datetime().describe('ISO 8601 UTC timestamp.'),
  })
  .strict()
  .register(apiSchemas, { id: 'User', description: 'A user account (interface §2.1, contract §7).' });

export type UserResource = z.output<typeof userResource>;

/** `GET /v2/users`: one page of the org's users. */
export const userPage = z
  .object({
    items: z.array(userResource),
    next_cursor: z
      .string()
      .nullable()
      .describe('Opaque; pass it as `cursor` for the next page. `null` on the last page.'),
  })
  .strict()
  .register(apiSchemas, { id: 'UserPage', description: "A page of the org's users, newest first (contract §7)." });

export type UserPage = z.output<typeof userPage>;

export function toUserResource(user: identityV1.User | undefined): UserResource {
  if (!user) throw new Error('identity answered without a user');
  return {
    id: user.id,
    email: user.email,
    ...(user.phone ? { phone: user.phone } : {}),
    display_name: user.displayName,
    status: user.status as UserResource['status'],
    roles: user.roles as UserResource['roles'],
    created_at: user.createdAt,
  };
}

/** A User answer (contract §7: every one carries its ETag, a strong validator). */
export function userAnswer(reply: FastifyReply, user: identityV1.User | undefined): UserResource {
  if (user?.etag) void reply.header('ETag', `"${user.etag}"`);
  return toUserResource(user);
}

/**
 * The entity tags of an `If-Match` header (RFC 9110 §13.1.1) for identity's strong comparison: `*`,
 * or the opaque tags without quotes. Weak tags never match strongly, so a header that names only weak
 * (or unreadable) tags becomes one tag that matches nothing; no header, no condition.
 */
export function ifMatchTags(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return ['*'];
  // A quoted "*" is an entity-tag like any other (no user's), not the wildcard: identity reads `*` as "any".
  const tags = [...value.matchAll(/(W\/)?"([\x21\x23-\x7e]*)"/g)].flatMap(([, weak, tag]) =>
    weak || tag === undefined || tag === '*' ? [] : [tag],
  );
  return tags.length > 0 ? tags : [''];
}

/**
 * The entity tags of an `If-None-Match` header (RFC 9110 §13.1.2) for identity's weak comparison on a
 * change: `*`, or the opaque tags (`W/` dropped: a weak tag names the state as well as a strong one).
 * A quoted `"*"` is a tag no user has, and an unreadable header names none: no condition either way.
 */
export function ifNoneMatchTags(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return ['*'];
  return [...value.matchAll(/(?:W\/)?"([\x21\x23-\x7e]*)"/g)].flatMap(([, tag]) =>
    tag === undefined || tag === '*' ? [] : [tag],
  );
}

/** A change's conditions as identity takes them: the tags of `If-Match` and of `If-None-Match`. */
export function preconditionsOf(headers: { 'if-match'?: string | string[]; 'if-none-match'?: string | string[] }) {
  return { ifMatch: ifMatchTags(headers['if-match']), ifNoneMatch: ifNoneMatchTags(headers['if-none-match']) };
}

/**
 * Whether `If-Match` lets a read of the user go ahead (RFC 9110 §13.1.1, strong comparison): no header,
 * `*`, or one of its tags is the user's current one.
 */
export function ifMatchHolds(header: string | string[] | undefined, etag: string): boolean {
  const tags = ifMatchTags(header);
  return tags.length === 0 || tags.includes('*') || tags.includes(etag);
}
