import { problemOfClientError } from './framework-errors';

describe('requests Node refuses before Fastify sees them', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408],
    ['HPE_INVALID_HEADER_TOKEN', 400],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 400],
    [undefined, 400],
  ])('answers %s with %d invalid_request', (code, status) => {
    const problem = problemOfClientError(code);
    expect(problem.code).toBe('invalid_request');
    expect(problem.status).toBe(status);
  });
});
