import { DomainError } from '@acct/problem';
import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { ArgumentsHost } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { LIMIT_REQUEST, LimitRequest } from './framework-errors';
import { ProblemFilter } from './problem.filter';
import { FORM_CONTENT_TYPE, JSON_ONLY, JSON_OR_FORM } from './request-body';
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

  /** A reply that records its headers and whether, and with what status, it was sent. */
  const reply = () => {
    const headers = new Map<string, string>();
    const sent = { status: 0, body: '' };
    const fake = {
      sent: false,
      hasHeader: (name: string) => headers.has(name),
      header(name: string, value: string) {
        headers.set(name, value);
        return fake;
      },
      status(code: number) {
        sent.status = code;
        return fake;
      },
      send(body: string) {
        sent.body = body;
        fake.sent = true;
        return fake;
      },
    };
    return { fake, headers, sent };
  };

  const hostWith = (request: unknown, fake: unknown) =>
    ({
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => fake }),
    }) as unknown as ArgumentsHost;

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

  describe('for a request no hook ran for', () => {
    const hostOf = (fake: unknown) => hostWith({ method: 'GET', url: '/%zz', id: 'req-1' }, fake);
    const withLimiter = (limit: LimitRequest | undefined) =>
      new ProblemFilter(routes, {
        get: (token: unknown) => {
          if (token !== LIMIT_REQUEST || !limit) throw new Error('no provider');
          return limit;
        },
      } as unknown as ModuleRef);

    it('counts it with the limiter rate-limits/ provides, then sends the problem with its headers', async () => {
      const { fake, headers, sent } = reply();
      const limit: LimitRequest = (_request, answer: FastifyReply) => {
        void answer.header('X-RateLimit-Limit', '10');
        return Promise.resolve();
      };
      await withLimiter(limit).catch(new NotFoundException(), hostOf(fake));
      expect(headers.get('X-RateLimit-Limit')).toBe('10');
      expect(sent.status).toBe(404);
      expect(JSON.parse(sent.body)).toMatchObject({ code: 'not_found', request_id: 'req-1' });
    });

    it('lets the limiter answer 429 itself: nothing more is sent', async () => {
      const { fake, sent } = reply();
      const limit: LimitRequest = (_request, answer: FastifyReply) => {
        (answer as unknown as { send: (body: string) => void }).send('{"code":"rate_limited"}');
        return Promise.resolve();
      };
      await withLimiter(limit).catch(new NotFoundException(), hostOf(fake));
      expect(sent.body).toBe('{"code":"rate_limited"}');
    });

    it('still sends the problem when there is no limiter (or it fails)', async () => {
      for (const limit of [undefined, () => Promise.reject(new Error('redis down'))]) {
        const { fake, sent } = reply();
        await withLimiter(limit).catch(new NotFoundException(), hostOf(fake));
        expect(sent.status).toBe(404);
      }
    });
  });

  it('keeps the sign-in form’s own 415 detail, and words only Fastify’s generic refusal as the OAuth endpoints read', async () => {
    const oauth = new RouteTable();
    oauth.add('POST', '/v2/auth/authorize');
    oauth.add('POST', '/v2/auth/token');
    const oauthFilter = new ProblemFilter(oauth, {} as ModuleRef);
    const oauthRequest = (url: string) => ({
      method: 'POST',
      url,
      id: 'req-1',
      headers: { 'content-type': 'application/json' },
      routeOptions: { config: { rateLimitGroup: 'auth' } },
    });
    const { fake, headers, sent } = reply();
    headers.set('X-RateLimit-Limit', '3');
    // What AuthorizeController.signIn throws for a JSON body.
    await oauthFilter.catch(
      new DomainError('unsupported_media_type', `Send the form as ${FORM_CONTENT_TYPE}.`),
      hostWith(oauthRequest('/v2/auth/authorize'), fake),
    );
    expect(sent.status).toBe(415);
    const problem = JSON.parse(sent.body);
    expect(problem.detail).toBe(`Send the form as ${FORM_CONTENT_TYPE}.`);
    expect(problem.error_description).toBe(`Send the form as ${FORM_CONTENT_TYPE}.`);

    // Fastify's own refusal of a media type at the token endpoint still names both.
    await oauthFilter.catch({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }, hostWith(oauthRequest('/v2/auth/token'), fake));
    expect(JSON.parse(sent.body).detail).toBe(JSON_OR_FORM);
  });

  it('words Fastify’s 415 as what each endpoint reads: the sign-in form a form, the other OAuth endpoints JSON or a form, the rest JSON', async () => {
    const table = new RouteTable();
    const endpoints = [
      ['/v2/auth/authorize', 'auth', `Send the form as ${FORM_CONTENT_TYPE}.`],
      ['/v2/auth/token', 'auth', JSON_OR_FORM],
      ['/v2/auth/revoke', 'auth', JSON_OR_FORM],
      ['/v2/auth/introspect', 'auth', JSON_OR_FORM],
      ['/v2/users', 'users.write', JSON_ONLY],
    ] as const;
    for (const [url] of endpoints) table.add('POST', url);
    const tableFilter = new ProblemFilter(table, {} as ModuleRef);
    for (const [url, group, detail] of endpoints) {
      const { fake, headers, sent } = reply();
      headers.set('X-RateLimit-Limit', '3');
      // A text/plain body: Fastify has no parser for it and refuses it before the endpoint runs.
      const textRequest = {
        method: 'POST',
        url,
        id: 'req-1',
        headers: { 'content-type': 'text/plain' },
        routeOptions: { url, method: 'POST', config: { rateLimitGroup: group } },
      };
      await tableFilter.catch({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }, hostWith(textRequest, fake));
      const problem = JSON.parse(sent.body);
      expect({ url, status: sent.status, code: problem.code, detail: problem.detail }).toEqual({
        url,
        status: 415,
        code: 'unsupported_media_type',
        detail,
      });
      if (group === 'auth') expect(problem.error_description).toBe(detail);
    }
  });
});
