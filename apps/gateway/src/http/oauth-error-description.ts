/**
 * RFC 6749 §4.1.2.1 and §5.2 (and so RFC 7009 and RFC 7662): an `error_description` "MUST NOT include
 * characters outside the set %x20-21 / %x23-5B / %x5D-7E", i.e. printable ASCII without `"` and `\`.
 * Descriptions quote what the client sent (a grant type, a scope, a parameter's name), so they may
 * hold any character; strict OAuth libraries refuse such an error response outright.
 */
const OUTSIDE_DESCRIPTION_SET = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g;

/** `description` with `"` written as `'` and every other character outside the set as `?`. */
export function oauthErrorDescription(description: string): string {
  return description.replace(OUTSIDE_DESCRIPTION_SET, (char) => (char === '"' ? "'" : '?'));
}
