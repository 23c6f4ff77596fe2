import { DomainError } from './domain-error';
import { toProblemDocument } from './problem-document';

describe('DomainError', () => {
  it('takes the status of its code unless told otherwise', () => {
    expect(new DomainError('email_taken', 'x').status).toBe(409);
    expect(new DomainError('quota_exceeded', 'x').status).toBe(403);
    expect(new DomainError('quota_exceeded', 'x', { status: 429, retryAfter: 3 }).status).toBe(429);
  });

  it('survives a round trip through its payload', () => {
    const original = new DomainError('validation_failed', 'bad', {
      errors: [{ field: 'profile.timezone', message: 'must be an IANA time zone' }],
      retryAfter: 2,
    });
    const copy = DomainError.fromPayload(JSON.parse(JSON.stringify(original.toPayload())));
    expect(copy).toBeInstanceOf(DomainError);
    expect(copy?.toPayload()).toEqual(original.toPayload());
  });

  it('carries an audit reason for the process that threw it, never in its payload', () => {
    const error = new DomainError('invalid_grant', 'Wrong code.', { auditReason: 'mfa_code_reused' });
    expect(error.auditReason).toBe('mfa_code_reused');
    expect(error.toPayload()).not.toHaveProperty('auditReason');
    expect(JSON.stringify(toProblemDocument(error, 'req-1'))).not.toContain('mfa_code_reused');
    expect(new DomainError('invalid_grant', 'Wrong password.').auditReason).toBe('invalid_grant');
  });

  it('refuses a payload without a known code', () => {
    expect(DomainError.fromPayload({ code: 'nope', detail: 'x' })).toBeUndefined();
    expect(DomainError.fromPayload('validation_failed')).toBeUndefined();
  });

  it('renders a problem document with the contract members', () => {
    const error = new DomainError('invalid_grant', 'The refresh token is invalid.', {
      extensions: { error: 'invalid_grant', error_description: 'The refresh token is invalid.' },
    });
    expect(toProblemDocument(error, 'req-1')).toEqual({
      type: 'urn:account-platform:problem:invalid_grant',
      title: 'Invalid grant',
      status: 400,
      detail: 'The refresh token is invalid.',
      code: 'invalid_grant',
      request_id: 'req-1',
      error: 'invalid_grant',
      error_description: 'The refresh token is invalid.',
    });
  });
});
