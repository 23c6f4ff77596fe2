/**
 * The rules of a user's fields (contract §3) that the gateway and identity both apply: the gateway
 * so that one answer names every failing field, identity because it is the owner of the data and
 * other callers reach it too. Kept here once, so the two edges cannot drift apart.
 */

export const EMAIL_MAX_LENGTH = 254;
/** RFC 5321 §4.5.3.1.1: the part before the last `@`. */
export const EMAIL_LOCAL_PART_MAX_LENGTH = 64;
export const DISPLAY_NAME_MAX_LENGTH = 64;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

/**
 * The address syntax both edges accept, so they agree on what an e-mail is (and the OpenAPI document
 * says it): zod's (`z.regexes.email`), except that zod's top-level domain is letters only. One of an
 * internationalised domain is a host name in its ASCII form, `xn--…` (RFC 5890 §2.3.2.1; .中国 is
 * `xn--fiqs8s`, .рф `xn--p1ai`), and mail reaches it like any other (RFC 5321 §4.1.2).
 */
export const EMAIL_SYNTAX =
  /^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\-]*\.)+(?:[A-Za-z]{2,}|xn--[A-Za-z0-9-]+)$/;
/**
 * RFC 5321 §4.1.2 (RFC 1035 §2.3.1): a domain label is 1–63 letters, digits and hyphens, and starts and
 * ends with a letter or digit. Zod's address syntax lets a label end with `-` or run past 63.
 */
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** A BCP 47 tag's shape: a 2–8 letter language, then subtags (`zh-CN`, `zh-Hant-TW`, `en-u-ca-gregory`). */
const LANGUAGE_TAG_SHAPE = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;
/**
 * RFC 5646 §2.2.2: a 2–3 letter language with an extended language subtag (`zh-yue`, `zh-cmn-Hans-CN`).
 * Intl reads Unicode locale identifiers, which have no extlang; the tag's canonical form is the extlang
 * in the language's place (§4.5: every extlang's Preferred-Value is itself), which Intl reads.
 */
const EXTLANG_FORM = /^[A-Za-z]{2,3}-([A-Za-z]{3})(?=-|$)/;
/** An IANA `Area/Location` name: every part starts with a capital (`America/Port-au-Prince`, `Etc/GMT+5`). */
const IANA_ZONE_SHAPE = /^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)+$/;

/** Length in Unicode code points, not UTF-16 units: "🙂" is one character. */
export const codePoints = (value: string): number => [...value].length;

/** C0/C1 control characters, and lone surrogates (text that is not valid Unicode). */
export const CONTROL_CHARACTERS = /[\p{Cc}\p{Cs}]/u;
export const hasControlCharacters = (value: string): boolean => CONTROL_CHARACTERS.test(value);

/** Whether `value` is valid Unicode text: no lone surrogate, which gRPC's UTF-8 would turn into U+FFFD. */
export const isUnicodeText = (value: string): boolean => !/\p{Cs}/u.test(value);

/** Contract §3: a valid address of at most 254 characters. `trimmed` is the e-mail after trimming. */
export function emailProblem(trimmed: string): string | undefined {
  if (trimmed.length === 0) return 'must not be empty';
  if (trimmed.length > EMAIL_MAX_LENGTH) return `must be at most ${EMAIL_MAX_LENGTH} characters`;
  if (!EMAIL_SYNTAX.test(trimmed) || !hasDeliverableShape(trimmed)) return 'must be a valid e-mail address';
  return undefined;
}

/**
 * What an address needs beyond the shared syntax (`EMAIL_SYNTAX`, zod's): a local part of at most 64
 * characters (RFC 5321 §4.5.3.1.1) and a domain whose every label a host can have (`DOMAIN_LABEL`).
 */
export function hasDeliverableShape(email: string): boolean {
  const at = email.lastIndexOf('@');
  return (
    at <= EMAIL_LOCAL_PART_MAX_LENGTH &&
    email
      .slice(at + 1)
      .split('.')
      .every((label) => DOMAIN_LABEL.test(label))
  );
}

/** Contract §3: 8–128 characters (code points), taken exactly as given: never trimmed. */
export function passwordProblem(password: string): string | undefined {
  const length = codePoints(password);
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (!isUnicodeText(password)) return 'must be valid Unicode text';
  return undefined;
}

/** Some character a person sees: not white space, not a format character (U+200B, U+200D, U+2060, …). */
const VISIBLE = /[^\p{White_Space}\p{Cf}]/u;

/**
 * Contract §3: 1–64 code points after trimming, no control characters. A name of white space and
 * format characters alone (which `trim` leaves: zero-width spaces, joiners) is empty as shown.
 */
export function displayNameProblem(trimmed: string): string | undefined {
  if (!VISIBLE.test(trimmed)) return 'must not be empty';
  if (codePoints(trimmed) > DISPLAY_NAME_MAX_LENGTH) return `must be at most ${DISPLAY_NAME_MAX_LENGTH} characters`;
  if (hasControlCharacters(trimmed)) return 'must not contain control characters';
  return undefined;
}

/**
 * The canonical form of a BCP 47 language tag (`zh-cn` → `zh-CN`, `zh-yue` → `yue`), or undefined when
 * it is not one.
 */
export function canonicalLocale(tag: string): string | undefined {
  if (!LANGUAGE_TAG_SHAPE.test(tag)) return undefined;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag.replace(EXTLANG_FORM, '$1'));
    return canonical;
  } catch {
    return undefined;
  }
}

let knownZones: ReadonlySet<string> | undefined;

/**
 * An IANA time zone name: one that Intl lists, or `UTC`; or a current IANA name that this ICU knows
 * under an older alias (`Asia/Kolkata` is listed as `Asia/Calcutta`). Offsets such as `+08:00` are not
 * names, and neither are `asia/shanghai`, `GMT` or `EST5EDT`, which Intl alone would take.
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

/** A BCP 47 language tag that Intl understands (`zh-CN`, `en`, `pt-BR`). */
export const isLanguageTag = (tag: string): boolean => canonicalLocale(tag) !== undefined;
