import { ROLES } from '@acct/access-token';
import { z } from 'zod';

/**
 * Control characters, and lone surrogates: text that is not valid Unicode cannot reach identity intact
 * (gRPC sends UTF-8, which turns each into U+FFFD), so it is refused here, as identity refuses it.
 */
export const CONTROL_CHARACTERS = /[\p{Cc}\p{Cs}]/u;
export const codePoints = (value: string) => [...value].length;
/** Whether `value` is valid Unicode text: no lone surrogate, which gRPC's UTF-8 would turn into U+FFFD. */
export const isUnicodeText = (value: string) => !/\p{Cs}/u.test(value);

/** A BCP 47 language tag that Intl understands (`zh-CN`, `en`, `pt-BR`). */
export function isLanguageTag(value: string): boolean {
  if (!/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(value)) return false;
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

/** An IANA `Area/Location` name: every part starts with a capital (`America/Port-au-Prince`, `Etc/GMT+5`). */
const IANA_ZONE_SHAPE = /^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)+$/;
let knownZones: ReadonlySet<string> | undefined;

/**
 * An IANA time zone name (`Asia/Shanghai`, `UTC`), not an offset: the rule identity keeps (one that
 * Intl lists, or `UTC`, or an `Area/Location` name this ICU knows), so a request it would refuse for
 * the zone is refused here with every other failing field. Intl alone also takes `asia/shanghai`,
 * `GMT` or `EST5EDT`, which identity refuses.
 */
export function isTimeZone(value: string): boolean {
  knownZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
  if (knownZones.has(value)) return true;
  if (!IANA_ZONE_SHAPE.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const trimmed = z.string().transform((value) => value.trim());

/** `roles` where a request sets them (creation, PATCH): known roles, at least one, none twice. */
export const roleList = z
  .array(z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }))
  .min(1, 'must name at least one role')
  .refine((roles) => new Set(roles).size === roles.length, 'must not repeat a role');

/** `POST /v2/users` body (interface §4.1, contract §3); unknown fields are refused. */
export const createUserBody = z
  .object({
    email: trimmed.pipe(
      z
        .string()
        .min(1, 'must not be empty')
        .max(254, 'must be at most 254 characters')
        .pipe(z.email('must be a valid e-mail address'))
        // RFC 5321 §4.5.3.1.1, as identity checks it: a local part of at most 64 characters.
        .refine((value) => value.lastIndexOf('@') <= 64, 'must be a valid e-mail address'),
    ),
    display_name: trimmed
      .refine((value) => codePoints(value) >= 1, 'must not be empty')
      .refine((value) => codePoints(value) <= 64, 'must be at most 64 characters')
      .refine((value) => !CONTROL_CHARACTERS.test(value), 'must not contain control characters'),
    password: z
      .string()
      .refine((value) => codePoints(value) >= 8, 'must be at least 8 characters')
      .refine((value) => codePoints(value) <= 128, 'must be at most 128 characters')
      .refine(isUnicodeText, 'must be valid Unicode text')
      .optional(),
    roles: roleList.optional(),
    org_id: z.string().min(1, 'must not be empty').max(64, 'must be at most 64 characters').optional(),
    send_activation: z.boolean().optional(),
    phone: z
      .string()
      .max(32, 'must be at most 32 characters')
      .optional()
      .describe('A mobile number with its country code (`+86 138-0013-8000`, `0086…`), stored as E.164.'),
    profile: z
      .object({
        locale: z.string().refine(isLanguageTag, 'must be a BCP 47 language tag such as zh-CN').optional(),
        timezone: z.string().refine(isTimeZone, 'must be an IANA time zone such as Asia/Shanghai').optional(),
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
