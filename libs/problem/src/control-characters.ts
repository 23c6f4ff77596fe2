/** Unicode's control characters (Cc: U+0000–U+001F, U+007F–U+009F): never part of any field's value. */
const CONTROL_CHARACTER = /\p{Cc}/u;
const CONTROL_CHARACTERS = /\p{Cc}/gu;

export const hasControlCharacter = (value: string): boolean => CONTROL_CHARACTER.test(value);

/** `value` with each control character written as a `\uXXXX` escape: safe to store and to show. */
export const escapeControlCharacters = (value: string): string =>
  value.replace(CONTROL_CHARACTERS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The dotted paths of every string in `input` (objects, arrays, nested) holding a control character,
 * keys included: `body.name`, `query.dimension`, `body.tags.2`.
 */
export function fieldsWithControlCharacters(input: unknown, path = ''): string[] {
  if (typeof input === 'string') return hasControlCharacter(input) ? [path || '(value)'] : [];
  if (typeof input !== 'object' || input === null) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    const field = path ? `${path}.${escapeControlCharacters(key)}` : escapeControlCharacters(key);
    if (hasControlCharacter(key)) found.push(field);
    else found.push(...fieldsWithControlCharacters(value, field));
  }
  return found;
}
