/** Unicode's control characters (Cc: U+0000–U+001F, U+007F–U+009F): never part of any field's value. */
const CONTROL_CHARACTER = /\p{Cc}/u;

export const hasControlCharacter = (value: string): boolean => CONTROL_CHARACTER.test(value);

/** A control character, or the backslash that starts an escape. */
const ESCAPED = /[\p{Cc}\\]/gu;

/**
 * `value` with each control character written as a `\uXXXX` escape and each backslash doubled: safe to
 * store and to show, and never ambiguous (a sent `\u0000`, six characters, reads `\\u0000`).
 */
export const escapeControlCharacters = (value: string): string =>
  value.replace(ESCAPED, (char) => (char === '\\' ? '\\\\' : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`));

/**
 * The dotted paths of every string in `input` (objects, arrays, nested) holding a control character,
 * keys included: `body.name`, `query.dimension`, `body.tags.2`. Walks without recursion, so a body
 * nested thousands of levels deep is no stack overflow.
 */
export function fieldsWithControlCharacters(input: unknown, path = ''): string[] {
  const found: string[] = [];
  const pending: Array<[unknown, string]> = [[input, path]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, at] = next;
    if (typeof value === 'string') {
      if (hasControlCharacter(value)) found.push(at || '(value)');
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    for (const [key, inner] of Object.entries(value).reverse()) {
      const field = at ? `${at}.${escapeControlCharacters(key)}` : escapeControlCharacters(key);
      if (hasControlCharacter(key)) found.push(field);
      else pending.push([inner, field]);
    }
  }
  return found;
}
