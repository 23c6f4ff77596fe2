import { codePoints, hasControlCharacters } from '@acct/user-fields';

export const ORG_NAME_MAX_LENGTH = 100;

/** An org's name (unique): 1–100 characters after trimming, no control characters. */
export function orgNameProblem(trimmed: string): string | undefined {
  if (trimmed.length === 0) return 'must not be empty';
  if (codePoints(trimmed) > ORG_NAME_MAX_LENGTH) return `must be at most ${ORG_NAME_MAX_LENGTH} characters`;
  if (hasControlCharacters(trimmed)) return 'must not contain control characters';
  return undefined;
}
