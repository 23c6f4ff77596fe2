import { DomainError } from '@acct/problem';
import { Metadata, status } from '@grpc/grpc-js';

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
