import { ErrorCode } from '@acct/problem';
import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtension, ApiQuery, ApiResponse, HeaderObject } from '@nestjs/swagger';
import { z } from 'zod';

import { ACCEPT_PATCH, FORM_CONTENT_TYPE } from '../http/request-body';
import { documented } from './api-schemas';

/** Where `ApiProblems` leaves its codes for `buildOpenApiDocument` to turn into responses. */
export const PROBLEM_CODES = 'x-problem-codes';

/**
 * The problem+json answers of an operation, by contract code; grouped by status into responses whose
 * `code` is one of them. Not listed here because the document adds them itself: `rate_limited` (429,
 * every operation), and for routes with `@RequireScope` `unauthenticated` (401) and
 * `insufficient_scope` (403).
 */
export const ApiProblems = (...codes: ErrorCode[]) => ApiExtension(PROBLEM_CODES, codes);

/** A JSON request body described by the zod schema the route validates it with. */
export function ApiJsonBody(
  schema: z.ZodType,
  options: {
    name?: string;
    required?: boolean;
    formEncoded?: boolean;
    mergePatch?: boolean;
    description?: string;
  } = {},
) {
  const mediaTypes = options.mergePatch
    ? ACCEPT_PATCH.split(', ')
    : options.formEncoded
      ? ['application/json', FORM_CONTENT_TYPE]
      : ['application/json'];
  return applyDecorators(
    ApiConsumes(...mediaTypes),
    ApiBody({
      schema: documented(schema, options.name),
      required: options.required ?? true,
      description: options.description,
    }),
  );
}

/** A JSON success (or, for health, `down`) answer described by a zod schema. */
export function ApiJsonResponse(
  status: number,
  description: string,
  schema: z.ZodType,
  headers: Record<string, HeaderObject> = {},
) {
  return ApiResponse({
    status,
    description,
    content: { 'application/json': { schema: documented(schema) } },
    headers,
  });
}

/**
 * A keyset-paged list: its `limit` and `cursor` query parameters and its 200 answer, one page
 * described by `page` (the route's other filters are declared before it).
 */
export const ApiKeysetPage = (page: z.ZodType) =>
  applyDecorators(
    // Nest lists parameters in the order their decorators run, the last written first: limit, then cursor.
    ApiQuery({ name: 'cursor', required: false, schema: { type: 'string' } }),
    ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }),
    ApiJsonResponse(200, 'One page.', page),
  );

/** A response header clients can rely on. */
export const header = (description: string, schema: HeaderObject['schema'] = { type: 'string' }, required = true) =>
  ({ description, required, schema }) satisfies HeaderObject;
