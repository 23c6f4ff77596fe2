import { FieldError, validationFailed } from '@acct/problem';
import { z } from 'zod';

/** Turns zod's issues into contract field errors: one per failing field, dotted paths. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        errors.push({ field: base ? `${base}.${key}` : key, message: 'is not a known field' });
      }
      continue;
    }
    errors.push({ field: base || '(body)', message: messageOf(issue) });
  }
  return errors;
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') {
    return issue.input === undefined ? 'is required' : `must be ${article(issue.expected)}`;
  }
  return issue.message;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** Parses `input` with `schema`, or throws `400 validation_failed` listing every failing field. */
export function parseOrFail<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationFailed(fieldErrors(result.error.issues));
  return result.data;
}
