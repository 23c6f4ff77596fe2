import { DomainError } from '@acct/problem';

import { JSON_ONLY } from './request-body';

/** Errors Fastify raises before a route runs (body parsing, limits), as contract codes. */
export function fastifyErrorToDomainError(error: { code?: string; statusCode?: number }): DomainError | undefined {
  switch (error.code ?? '') {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError('malformed_body', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('payload_too_large', 'The request body is larger than 64 KiB.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new DomainError('unsupported_media_type', JSON_ONLY);
    default:
      if (error.statusCode === 400 && error instanceof SyntaxError) {
        return new DomainError('malformed_body', 'The request body is not valid JSON.');
      }
      return undefined;
  }
}
