import { DomainError, FieldError } from './domain-error';
import { TITLES } from './error-codes';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** An RFC 9457 problem document with the members of contract §1. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  request_id: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export const problemType = (code: string) => `urn:account-platform:problem:${code}`;

export function toProblemDocument(error: DomainError, requestId: string): ProblemDocument {
  const { errors, extensions } = error.options;
  return {
    ...extensions,
    type: problemType(error.code),
    title: TITLES[error.code],
    status: error.status,
    detail: error.detail,
    code: error.code,
    request_id: requestId,
    ...(errors ? { errors } : {}),
  };
}
