import { ERROR_STATUS, ErrorCode, ProblemDocument } from '@acct/problem';
import { z } from 'zod';

import { apiSchemas } from './api-schemas';

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** RFC 9457 problem document exactly as `@acct/problem`'s `toProblemDocument` builds it (contract §1). */
export const problem = z
  .object({
    type: z.string().describe('urn:account-platform:problem:<code>'),
    title: z.string(),
    status: z.int().min(400).max(599),
    detail: z.string(),
    code: z.enum(ERROR_CODES).describe('Stable machine code: what clients switch on.'),
    request_id: z.string().describe('Also in the X-Request-Id header and in every log line of the request.'),
    errors: z
      .array(z.object({ field: z.string(), message: z.string() }).strict())
      .optional()
      .describe('Input errors: one per failing field, dotted path (validation_failed).'),
    error: z.string().optional().describe('RFC 6749 §5.2 error (token endpoint only).'),
    error_description: z.string().optional().describe('RFC 6749 §5.2 error description (token endpoint only).'),
  })
  .register(apiSchemas, { id: 'Problem', description: 'Every non-2xx answer (RFC 9457, application/problem+json).' });

/** Compile-time proof that the documented problem is what `toProblemDocument` builds. */
export type ProblemMatchesItsType = Assert<[z.output<typeof problem>] extends [ProblemDocument] ? true : false>;
type Assert<Check extends true> = Check;
