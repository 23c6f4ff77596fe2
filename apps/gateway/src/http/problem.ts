import { DomainError, PROBLEM_CONTENT_TYPE, toProblemDocument } from '@acct/problem';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Writes a DomainError as an RFC 9457 problem document with its headers. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: DomainError) {
  const { retryAfter, headers } = error.options;
  if (retryAfter !== undefined) void reply.header('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
  for (const [name, value] of Object.entries(headers ?? {})) void reply.header(name, value);
  return reply
    .status(error.status)
    .header('Content-Type', PROBLEM_CONTENT_TYPE)
    .header('Cache-Control', 'no-store')
    .send(JSON.stringify(toProblemDocument(error, request.id)));
}
