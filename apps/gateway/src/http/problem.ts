import { DomainError, PROBLEM_CONTENT_TYPE, toProblemDocument } from '@acct/problem';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { oauthErrorDescription } from './oauth-error-description';

/** A `Retry-After` value: whole seconds (RFC 9110 §10.2.3 has no fractions), at least 1. */
export const retryAfterSeconds = (seconds: number) => Math.max(1, Math.ceil(seconds));

/**
 * Writes a DomainError as an RFC 9457 problem document with its headers; an OAuth `error_description`
 * member in the character set RFC 6749 §5.2 allows it (`detail` says the same without that limit).
 */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: DomainError) {
  const description = problem.options.extensions?.error_description;
  const error =
    typeof description === 'string' && oauthErrorDescription(description) !== description
      ? new DomainError(problem.code, problem.detail, {
          ...problem.options,
          extensions: { ...problem.options.extensions, error_description: oauthErrorDescription(description) },
        })
      : problem;
  const { retryAfter, headers } = error.options;
  if (retryAfter !== undefined) void reply.header('Retry-After', String(retryAfterSeconds(retryAfter)));
  for (const [name, value] of Object.entries(headers ?? {})) void reply.header(name, value);
  return reply
    .status(error.status)
    .header('Content-Type', PROBLEM_CONTENT_TYPE)
    .header('Cache-Control', 'no-store')
    .send(JSON.stringify(toProblemDocument(error, request.id)));
}
