import { DomainError } from '@acct/problem';
import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { ProblemFilter } from './problem.filter';
import { RouteTable } from './route-table';

describe('ProblemFilter', () => {
  const routes = new RouteTable();
  routes.add('POST', '/v2/users');
  routes.add('GET', '/v2/users/:id');
  const filter = new ProblemFilter(routes, {} as ModuleRef);
  const request = (method: string, url: string) => ({ method, url }) as FastifyRequest;
  const codeOf = (exception: unknown, method: string, url: string) => {
    const error = filter.toDomainError(exception, request(method, url));
    return { status: error.status, code: error.code, allow: error.options.headers?.Allow };
  };

  it('passes a DomainError on as it is', () => {
    const error = new DomainError('email_taken', 'taken');
    expect(filter.toDomainError(error, request('POST', '/v2/users'))).toBe(error);
  });

  it('answers an unknown path 404 and a known path with another method 405 with Allow, even after a body failure', () => {
    expect(codeOf(new BadRequestException(), 'POST', '/v2/nothing')).toEqual({
      status: 404,
      code: 'not_found',
      allow: undefined,
    });
    expect(codeOf(new BadRequestException(), 'DELETE', '/v2/users?x=1')).toEqual({
      status: 405,
      code: 'method_not_allowed',
      allow: 'POST',
    });
  });

  it("turns Fastify's body-parsing failures into their contract codes", () => {
    expect(codeOf({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }, 'POST', '/v2/users').code).toBe('unsupported_media_type');
    expect(codeOf(new BadRequestException(), 'POST', '/v2/users').code).toBe('malformed_body');
    expect(codeOf(new PayloadTooLargeException(), 'POST', '/v2/users').code).toBe('payload_too_large');
    expect(codeOf(new NotFoundException(), 'GET', '/v2/users/1').code).toBe('not_found');
  });

  it('answers anything unexpected with a generic 500 that says nothing of the cause', () => {
    const error = filter.toDomainError(
      new Error('SELECT * FROM users failed at 10.0.0.3'),
      request('GET', '/v2/users/1'),
    );
    expect({ status: error.status, code: error.code }).toEqual({ status: 500, code: 'internal_error' });
    expect(error.detail).not.toMatch(/SELECT|10\.0\.0\.3/);
  });
});
