import { DomainError } from '@acct/problem';
import { z } from 'zod';

import { parseBothOrFail, parseOrFail } from './validation';

const fieldErrorsOf = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    return (error as DomainError).options.errors;
  }
  throw new Error('parsed');
};

describe('parseOrFail', () => {
  const body = z.object({ send_activation: z.boolean().optional(), roles: z.array(z.string()), name: z.string() });

  it('says a field of the wrong type must be of its type, and only a missing one is required', () => {
    expect(fieldErrorsOf(() => parseOrFail(body, { send_activation: 'yes', roles: 'member', name: null }))).toEqual([
      { field: 'send_activation', message: 'must be a boolean' },
      { field: 'roles', message: 'must be an array' },
      { field: 'name', message: 'must be a string' },
    ]);
    expect(fieldErrorsOf(() => parseOrFail(body, {}))).toEqual([
      { field: 'roles', message: 'is required' },
      { field: 'name', message: 'is required' },
    ]);
  });

  it('lists the failing fields of both inputs of a request in one refusal', () => {
    const header = z.object({ 'Idempotency-Key': z.string().max(3).optional() });
    expect(
      fieldErrorsOf(() => parseBothOrFail([body, { roles: [] }], [header, { 'Idempotency-Key': 'long' }])),
    ).toEqual([
      { field: 'name', message: 'is required' },
      { field: 'Idempotency-Key', message: expect.any(String) },
    ]);
  });
});
