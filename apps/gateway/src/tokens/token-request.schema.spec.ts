import { DomainError } from '@acct/problem';
import type { FastifyRequest } from 'fastify';

import { tokenParameters } from './token-request';
import { tokenRequest } from './token-request.schema';

const jsonRequest = (body: unknown) =>
  ({ headers: { 'content-type': 'application/json' }, body }) as unknown as FastifyRequest;

describe('the documented token request', () => {
  const documented = Object.keys(tokenRequest.shape).sort();

  it('lists exactly the parameters the token endpoint reads', () => {
    expect(Object.keys(tokenParameters(jsonRequest({}))).sort()).toEqual(documented);
  });

  it.each(Object.keys(tokenRequest.shape))('%s is a parameter the endpoint checks', (field) => {
    expect(() => tokenParameters(jsonRequest({ [field]: 42 }))).toThrow(DomainError);
  });

  it('defaults grant_type to password, as the endpoint does', () => {
    expect(tokenRequest.parse({}).grant_type).toBe('password');
    expect(tokenParameters(jsonRequest({})).grant_type).toBe('password');
  });
});
