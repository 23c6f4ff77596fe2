import { isRole, Role, ROLES } from '@acct/access-token';
import { canonicalLocale, displayNameProblem, emailProblem, isTimeZone, passwordProblem } from '@acct/user-fields';

import { FieldErrors } from '../validation';
import { normalizePhone } from './phone';

export const DEFAULT_ROLES: readonly Role[] = ['member'];
export const DEFAULT_LOCALE = 'zh-CN';
export const DEFAULT_TIME_ZONE = 'Asia/Shanghai';

/** The form of an e-mail that uniqueness is decided on (contract §3: case-insensitive). */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Contract §3: each role known, none twice. An empty list means "not given" (proto3 cannot tell). */
export function checkRoles(roles: readonly string[], errors: FieldErrors): void {
  roles.forEach((role, index) =>
    errors.check(`roles.${index}`, isRole(role) ? undefined : `must be one of ${ROLES.join(', ')}`),
  );
  errors.check('roles', new Set(roles).size === roles.length ? undefined : 'must not repeat a role');
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
