import { isRole, Role, ROLES } from '@acct/access-token';
import { z } from 'zod';

import { passwordProblem } from '../passwords/password-policy';
import { codePoints, FieldErrors, hasControlCharacters } from '../validation';
import { normalizePhone } from './phone';

export const EMAIL_MAX_LENGTH = 254;
/** RFC 5321 §4.5.3.1.1. */
const EMAIL_LOCAL_PART_MAX_LENGTH = 64;
export const DISPLAY_NAME_MAX_LENGTH = 64;
export const DEFAULT_ROLES: readonly Role[] = ['member'];
export const DEFAULT_LOCALE = 'zh-CN';
export const DEFAULT_TIME_ZONE = 'Asia/Shanghai';

/** The address syntax the gateway accepts too (zod's), so both edges agree on what an e-mail is. */
const EMAIL_SYNTAX = z.regexes.email;
/** A BCP 47 tag's shape: a 2–8 letter language, then subtags (`zh-CN`, `zh-Hant-TW`, `en-u-ca-gregory`). */
const LANGUAGE_TAG_SHAPE = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;
/** An IANA `Area/Location` name: every part starts with a capital (`America/Port-au-Prince`, `Etc/GMT+5`). */
const IANA_ZONE_SHAPE = /^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)+$/;

/** The form of an e-mail that uniqueness is decided on (contract §3: case-insensitive). */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Contract §3: ≤ 254 characters and a valid address. `trimmed` is the e-mail after trimming. */
export function emailProblem(trimmed: string): string | undefined {
  if (trimmed.length === 0) return 'must not be empty';
  if (trimmed.length > EMAIL_MAX_LENGTH) return `must be at most ${EMAIL_MAX_LENGTH} characters`;
  if (!EMAIL_SYNTAX.test(trimmed) || trimmed.lastIndexOf('@') > EMAIL_LOCAL_PART_MAX_LENGTH) {
    return 'must be a valid e-mail address';
  }
  return undefined;
}

/** Contract §3: 1–64 code points after trimming, no control characters. */
export function displayNameProblem(trimmed: string): string | undefined {
  if (trimmed.length === 0) return 'must not be empty';
  if (codePoints(trimmed) > DISPLAY_NAME_MAX_LENGTH) return `must be at most ${DISPLAY_NAME_MAX_LENGTH} characters`;
  if (hasControlCharacters(trimmed)) return 'must not contain control characters';
  return undefined;
}

/** Contract §3: each role known, none twice. An empty list means "not given" (proto3 cannot tell). */
export function checkRoles(roles: readonly string[], errors: FieldErrors): void {
  roles.forEach((role, index) =>
    errors.check(`roles.${index}`, isRole(role) ? undefined : `must be one of ${ROLES.join(', ')}`),
  );
  errors.check('roles', new Set(roles).size === roles.length ? undefined : 'must not repeat a role');
}

/** The canonical form of a BCP 47 language tag (`zh-cn` → `zh-CN`), or undefined when it is not one. */
export function canonicalLocale(tag: string): string | undefined {
  if (!LANGUAGE_TAG_SHAPE.test(tag)) return undefined;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical;
  } catch {
    return undefined;
  }
}

let knownZones: ReadonlySet<string> | undefined;

/**
 * An IANA time zone name: one that Intl lists, or `UTC`; or a current IANA name that this ICU knows
 * under an older alias (`Asia/Kolkata` is listed as `Asia/Calcutta`). Offsets such as `+08:00` are not names.
 */
export function isTimeZone(name: string): boolean {
  knownZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
  if (knownZones.has(name)) return true;
  if (!IANA_ZONE_SHAPE.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** `CreateUser` as it arrives (transport-neutral). */
export interface NewUserRequest {
  email: string;
  displayName: string;
  password?: string;
  roles: readonly string[];
  orgId?: string;
  sendActivation?: boolean;
  profile?: { locale?: string; timezone?: string };
  /** A mobile number in any spelling `normalizePhone` accepts. */
  phone?: string;
}

/** A `CreateUser` request that keeps every rule, normalised and with its defaults filled in. */
export interface ValidNewUser {
  /** As given, trimmed. */
  email: string;
  emailNormalized: string;
  displayName: string;
  password?: string;
  roles: Role[];
  orgId?: string;
  sendActivation: boolean;
  locale: string;
  timeZone: string;
  /** E.164, or null. */
  phone: string | null;
}

/** `phone` checked and normalised into `errors`; undefined when it fails (the error is recorded). */
export function checkPhone(input: string, errors: FieldErrors): string | undefined {
  const result = normalizePhone(input);
  if ('problem' in result) {
    errors.check('phone', result.problem);
    return undefined;
  }
  return result.phone;
}

/** The canonical locale of `profile.locale`, recorded as an error when it is not a BCP 47 tag. */
function checkLocale(tag: string, errors: FieldErrors): string | undefined {
  const locale = canonicalLocale(tag);
  errors.check('profile.locale', locale === undefined ? 'must be a BCP 47 language tag such as zh-CN' : undefined);
  return locale;
}

function checkTimeZone(zone: string, errors: FieldErrors): void {
  errors.check('profile.timezone', isTimeZone(zone) ? undefined : 'must be an IANA time zone such as Asia/Shanghai');
}

/** Checks every field of contract §3 at once; throws `validation_failed` listing all that fail. */
export function validateNewUser(request: NewUserRequest): ValidNewUser {
  const errors = new FieldErrors();
  const email = request.email.trim();
  errors.check('email', emailProblem(email));
  const displayName = request.displayName.trim();
  errors.check('display_name', displayNameProblem(displayName));
  if (request.password !== undefined) errors.check('password', passwordProblem(request.password));
  checkRoles(request.roles, errors);
  if (request.orgId !== undefined) errors.check('org_id', request.orgId.length === 0 ? 'must not be empty' : undefined);
  const locale = request.profile?.locale === undefined ? DEFAULT_LOCALE : checkLocale(request.profile.locale, errors);
  const timeZone = request.profile?.timezone ?? DEFAULT_TIME_ZONE;
  checkTimeZone(timeZone, errors);
  const phone = request.phone === undefined ? null : checkPhone(request.phone, errors);
  errors.throwIfAny();
  return {
    email,
    emailNormalized: normalizeEmail(email),
    displayName,
    password: request.password,
    roles: request.roles.length === 0 ? [...DEFAULT_ROLES] : request.roles.filter(isRole),
    orgId: request.orgId,
    sendActivation: request.sendActivation ?? true,
    locale: locale ?? DEFAULT_LOCALE,
    timeZone,
    phone: phone ?? null,
  };
}

/**
 * `UpdateUser` as it arrives: a JSON merge patch (RFC 7396). A member left out is unchanged; `null`
 * removes the phone and puts a profile field back to its default.
 */
export interface UserPatchRequest {
  displayName?: string;
  roles?: readonly string[];
  locale?: string | null;
  timezone?: string | null;
  phone?: string | null;
}

/** The changes of a patch that keeps every rule of creation, normalised; only what it changes. */
export interface ValidUserPatch {
  displayName?: string;
  roles?: Role[];
  locale?: string;
  timeZone?: string;
  /** null: remove the phone. */
  phone?: string | null;
}

/** Checks a patch with the rules of creation (contract §7); throws `validation_failed` listing every failing field. */
export function validateUserPatch(patch: UserPatchRequest): ValidUserPatch {
  const errors = new FieldErrors();
  const valid: ValidUserPatch = {};
  if (patch.displayName !== undefined) {
    valid.displayName = patch.displayName.trim();
    errors.check('display_name', displayNameProblem(valid.displayName));
  }
  if (patch.roles !== undefined) {
    errors.check('roles', patch.roles.length === 0 ? 'must name at least one role' : undefined);
    checkRoles(patch.roles, errors);
    valid.roles = patch.roles.filter(isRole);
  }
  if (patch.locale !== undefined) {
    valid.locale = patch.locale === null ? DEFAULT_LOCALE : checkLocale(patch.locale, errors);
  }
  if (patch.timezone !== undefined) {
    valid.timeZone = patch.timezone ?? DEFAULT_TIME_ZONE;
    checkTimeZone(valid.timeZone, errors);
  }
  if (patch.phone !== undefined) {
    valid.phone = patch.phone === null ? null : checkPhone(patch.phone, errors);
  }
  errors.throwIfAny();
  return valid;
}
