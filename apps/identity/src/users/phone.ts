import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** What a person may type between the digits of a number: spaces, dashes, dots, parentheses. */
const SEPARATORS = /[\s\-.()\u00a0]/g;
/** `+` or the international call prefix `00`, then digits only. */
const INTERNATIONAL = /^(?:\+|00)(\d{6,15})$/;

export type PhoneResult = { phone: string } | { problem: string };

/**
 * A mobile number in E.164 (contract §7), from the spellings people type: `+86 138-0013-8000`,
 * `+86 (138) 0013 8000` and `008613800138000` all become `+8613800138000`. `00` is read as the
 * international prefix (ITU-T E.164 recommends it; no national number begins with it). A number
 * without `+` or `00` names no country and is refused rather than guessed; so is one that
 * libphonenumber's full metadata does not know as a valid number of its country.
 */
export function normalizePhone(input: string): PhoneResult {
  const compact = input.trim().replace(SEPARATORS, '');
  const digits = INTERNATIONAL.exec(compact)?.[1];
  if (digits === undefined) {
    return { problem: 'must be a mobile number in international format with its country code, such as +8613800138000' };
  }
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  if (!parsed?.isValid()) return { problem: 'must be a valid phone number' };
  return { phone: parsed.number };
}

/** Whether a login username is meant as a phone number rather than an e-mail. */
export const looksLikePhone = (username: string): boolean => !username.includes('@');
