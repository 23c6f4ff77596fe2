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

/**
 * zod 4 leaves a value out of its issues unless asked: without it every wrong type read as missing
 * ("is required" for `"send_activation": "yes"`). The value itself never reaches a message.
 */
const REPORT_INPUT = { reportInput: true } as const;

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** Parses `input` with `schema`, or throws `400 validation_failed` listing every failing field. */
export function parseOrFail<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input, REPORT_INPUT);
  if (!result.success) throw validationFailed(fieldErrors(result.error.issues));
  return result.data;
}

/**
 * `parseOrFail` for two inputs of one request (its body and a header): one `400 validation_failed`
 * lists the failing fields of both (contract §1: `errors[]` lists every one).
 */
export function parseBothOrFail<First extends z.ZodType, Second extends z.ZodType>(
  first: [First, unknown],
  second: [Second, unknown],
): [z.output<First>, z.output<Second>] {
  const one = first[0].safeParse(first[1], REPORT_INPUT);
  const other = second[0].safeParse(second[1], REPORT_INPUT);
  if (!one.success || !other.success) {
    throw validationFailed(fieldErrors([...(one.error?.issues ?? []), ...(other.error?.issues ?? [])]));
  }
  return [one.data, other.data];
}
