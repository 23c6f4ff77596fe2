import { codePoints } from '../validation';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

/** Contract §3: 8–128 characters (code points), taken exactly as given: never trimmed. */
export function passwordProblem(password: string): string | undefined {
  const length = codePoints(password);
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (/\p{Cs}/u.test(password)) return 'must be valid Unicode text';
  return undefined;
}
