import { Writable } from 'node:stream';

import { createLogger, NestPinoLogger, runInRequestContext } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { Metadata, status } from '@grpc/grpc-js';
import { ConsoleLogger, Logger } from '@nestjs/common';

import { domainErrorToGrpc, grpcFailureToDomainError } from './error-mapping';

describe('gRPC error mapping', () => {
  it('carries a domain error across with its code, fields and retry hint', () => {
    const original = new DomainError('validation_failed', 'bad input', {
      errors: [{ field: 'email', message: 'must be an e-mail address' }],
    });
    const wire = domainErrorToGrpc(original);
    expect(wire.code).toBe(status.INVALID_ARGUMENT);
    const back = grpcFailureToDomainError(
      { code: wire.code, details: wire.message, metadata: wire.metadata },
      'identity',
    );
    expect(back.toPayload()).toEqual(original.toPayload());
  });

  it.each([status.UNAVAILABLE, status.DEADLINE_EXCEEDED])('turns status %p into service_unavailable', (code) => {
    const error = grpcFailureToDomainError({ code, details: 'x', metadata: new Metadata() }, 'platform');
    expect(error.code).toBe('service_unavailable');
    expect(error.status).toBe(503);
    expect(error.options.retryAfter).toBeGreaterThanOrEqual(1);
    expect(error.detail).toContain('platform');
  });

  it('hides anything else behind an internal error', () => {
    const error = grpcFailureToDomainError({ code: status.INTERNAL, details: 'stack at db.ts:12' }, 'auth');
    expect(error.code).toBe('internal_error');
    expect(error.detail).not.toContain('db.ts');
  });
});

describe('an unexpected gRPC failure', () => {
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(() => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    Logger.overrideLogger(new NestPinoLogger(createLogger('gateway', 'info', destination)));
  });
  afterAll(() => {
    Logger.overrideLogger(new ConsoleLogger());
  });

  it('is logged, with its status and the request id, by the caller that answers it as a 500', () => {
    const error = runInRequestContext({ requestId: 'req-unexpected-1' }, () =>
      grpcFailureToDomainError(
        { code: status.UNIMPLEMENTED, details: 'The server does not implement the method /identity.v1.X/Y' },
        'identity',
      ),
    );
    expect(error.code).toBe('internal_error');
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        request_id: 'req-unexpected-1',
        message: expect.stringMatching(/identity.*UNIMPLEMENTED.*does not implement/),
      }),
    );
  });
});
