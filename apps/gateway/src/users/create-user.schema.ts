import { ROLES } from '@acct/access-token';
import {
  displayNameProblem,
  EMAIL_MAX_LENGTH,
  EMAIL_SYNTAX,
  hasDeliverableShape,
  isLanguageTag,
  isTimeZone,
  passwordProblem,
} from '@acct/user-fields';
import { z } from 'zod';

/**
 * The field rules are identity's (`@acct/user-fields`): applied here too, so one answer names every
 * failing field. Control characters and lone surrogates are refused here as identity refuses them:
 * text that is not valid Unicode cannot reach identity intact (gRPC sends UTF-8, which turns each into
 * U+FFFD).
 */
const trimmed = z.string().transform((value) => value.trim());

/** A check by one of identity's rules: the rule's problem, if any, is the field's message. */
const byRule =
  (problem: (value: string) => string | undefined) =>
  (value: string, context: z.RefinementCtx): void => {
    const message = problem(value);
    if (message !== undefined) context.addIssue({ code: 'custom', message });
  };

/** `display_name` (contract §3), trimmed. */
export const displayName = trimmed.superRefine(byRule(displayNameProblem));
export const languageTag = z.string().refine(isLanguageTag, 'must be a BCP 47 language tag such as zh-CN');
export const timeZone = z.string().refine(isTimeZone, 'must be an IANA time zone such as Asia/Shanghai');

/** `roles` where a request sets them (creation, PATCH): known roles, at least one, none twice. */
export const roleList = z
  .array(z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }))
  .min(1, 'must name at least one role')
  .refine((roles) => new Set(roles).size === roles.length, 'must not repeat a role');

/**
 * `POST /v2/users` body (interface §4.1, contract §3); unknown fields are refused. The defaults are
 * identity's (it applies them), stated for the document only: the parsed body keeps what was sent.
 */
export const createUserBody = z
  .object({
    email: trimmed.pipe(
      z
        .string()
        .min(1, 'must not be empty')
        .max(EMAIL_MAX_LENGTH, `must be at most ${EMAIL_MAX_LENGTH} characters`)
        // `abort`: an address the syntax refuses is not judged again by its shape, which would name it twice.
        .pipe(z.email({ pattern: EMAIL_SYNTAX, error: 'must be a valid e-mail address', abort: true }))
        .refine(hasDeliverableShape, 'must be a valid e-mail address'),
    ),
    display_name: displayName,
    password: z.string().superRefine(byRule(passwordProblem)).optional(),
    roles: roleList.optional().meta({ default: ['member'] }),
    org_id: z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters').optional(),
    send_activation: z.boolean().optional().meta({ default: true }),
    phone: z
      .string()
      .max(32, 'must be at most 32 characters')
      .optional()
      .describe('A mobile number with its country code (`+86 138-0013-8000`, `0086…`), stored as E.164.'),
    profile: z
      .object({
        locale: languageTag.optional().meta({ default: 'zh-CN' }),
        timezone: timeZone.optional().meta({ default: 'Asia/Shanghai' }),
      })
      .strict()
      .optional(),
  })
  .strict();

export type CreateUserBody = z.output<typeof createUserBody>;

/** Contract §3: 1–255 printable ASCII characters. */
export const idempotencyKey = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, 'must be 1–255 printable ASCII characters')
  .optional();

/** The header as `errors[]` names it when it breaks its rule (not the body, which it is not part of). */
export const idempotencyKeyHeader = z.object({ 'Idempotency-Key': idempotencyKey });
