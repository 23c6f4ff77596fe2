import type { Socket } from 'node:net';

import { DomainError } from '@acct/problem';

import { clientError, CONNECT_REFUSED, problemOfClientError } from './framework-errors';

describe('requests Node refuses before Fastify sees them', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 431],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408],
    ['HPE_INVALID_HEADER_TOKEN', 400],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 400],
    [CONNECT_REFUSED, 400],
    [undefined, 400],
  ])('answers %s with %d invalid_request', (code, status) => {
    const problem = problemOfClientError(code);
    expect(problem.code).toBe('invalid_request');
    expect(problem.status).toBe(status);
  });
});

describe('clientError', () => {
  /** A socket that records what is written to it. */
  const fakeSocket = () => {
    const socket = {
      written: '',
      destroyed: false,
      writable: true,
      remoteAddress: '192.0.2.9',
      paused: false,
      pause() {
        socket.paused = true;
      },
      write(data: string) {
        socket.written += data;
        return true;
      },
      destroy() {
        socket.destroyed = true;
        socket.writable = false;
      },
    };
    return socket;
  };
  const refusal = Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_HEADER_TOKEN' });

  afterEach(() => jest.useRealTimers());

  it("answers with the peer's rate-limit headers, once, however often the parser reports the socket", async () => {
    const limit = jest.fn(() => Promise.resolve({ headers: [['X-RateLimit-Limit', '50'] as [string, string]] }));
    const handle = clientError(() => limit);
    const socket = fakeSocket();
    handle(refusal, socket as unknown as Socket);
    handle(refusal, socket as unknown as Socket);
    await new Promise((resolve) => setImmediate(resolve));
    expect(limit).toHaveBeenCalledTimes(1);
    expect(limit).toHaveBeenCalledWith('192.0.2.9', undefined);
    expect(socket.paused).toBe(true);
    expect(socket.written).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(socket.written).toContain('\r\nX-RateLimit-Limit: 50\r\n');
    expect(socket.destroyed).toBe(true);
  });

  it('hands the limiter the response of the request whose body was refused, whose decision it carries', async () => {
    const limit = jest.fn(() => Promise.resolve({ headers: [['X-RateLimit-Remaining', '7'] as [string, string]] }));
    const handle = clientError(() => limit);
    const inFlight = { _headerSent: false };
    const socket = Object.assign(fakeSocket(), { _httpMessage: inFlight });
    const timeout = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    handle(timeout, socket as unknown as Socket);
    await new Promise((resolve) => setImmediate(resolve));
    expect(limit).toHaveBeenCalledWith('192.0.2.9', inFlight);
    expect(socket.written).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(socket.written).toContain('\r\nX-RateLimit-Remaining: 7\r\n');
  });

  it('answers without the headers when the limiter does not answer within a second, and closes the socket', async () => {
    jest.useFakeTimers();
    const handle = clientError(() => () => new Promise(() => undefined));
    const socket = fakeSocket();
    handle(refusal, socket as unknown as Socket);
    await jest.advanceTimersByTimeAsync(999);
    expect(socket.written).toBe('');
    await jest.advanceTimersByTimeAsync(1);
    expect(socket.written).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(socket.written).not.toContain('X-RateLimit');
    expect(socket.destroyed).toBe(true);
  });

  it('answers 429 with Retry-After when the bucket is empty', async () => {
    const handle = clientError(
      () => () =>
        Promise.resolve({
          headers: [['X-RateLimit-Remaining', '0'] as [string, string]],
          refusal: new DomainError('rate_limited', 'Too many requests in the default group; retry later.', {
            retryAfter: 3,
          }),
        }),
    );
    const socket = fakeSocket();
    handle(refusal, socket as unknown as Socket);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.written).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(socket.written).toContain('\r\nRetry-After: 3\r\n');
    expect(socket.written).toContain('"code":"rate_limited"');
  });
});
