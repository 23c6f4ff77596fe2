import { DomainError } from '@acct/problem';
import { ArgumentsHost } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';

import { ProblemFilter } from './problem.filter';
import { FORM_CONTENT_TYPE, JSON_OR_FORM } from './request-body';
import { RouteTable } from './route-table';

describe('ProblemFilter: an auth-group route that reads forms only', () => {
  it('keeps the sign-in form’s own 415 detail (POST /v2/auth/authorize takes a form, never JSON)', async () => {
    const routes = new RouteTable();
    routes.add('POST', '/v2/auth/authorize');
    routes.add('POST', '/v2/auth/token');
    const filter = new ProblemFilter(routes, {} as ModuleRef);
    const headers = new Map<string, string>([['X-RateLimit-Limit', '3']]);
    const sent = { status: 0, body: '' };
    const reply = {
      sent: false,
      hasHeader: (name: string) => headers.has(name),
      header(name: string, value: string) {
        headers.set(name, value);
        return reply;
      },
      status(code: number) {
        sent.status = code;
        return reply;
      },
      send(body: string) {
        sent.body = body;
        return reply;
      },
    };
    const hostOf = (url: string) =>
      ({
        switchToHttp: () => ({
          getRequest: () => ({
            method: 'POST',
            url,
            id: 'req-1',
            headers: { 'content-type': 'application/json' },
            routeOptions: { config: { rateLimitGroup: 'auth' } },
          }),
          getResponse: () => reply,
        }),
      }) as unknown as ArgumentsHost;
    // What AuthorizeController.signIn throws for a JSON body.
    await filter.catch(
      new DomainError('unsupported_media_type', `Send the form as ${FORM_CONTENT_TYPE}.`),
      hostOf('/v2/auth/authorize'),
    );
    expect(sent.status).toBe(415);
    const problem = JSON.parse(sent.body);
    expect(problem.detail).toBe(`Send the form as ${FORM_CONTENT_TYPE}.`);
    expect(problem.error_description).toBe(`Send the form as ${FORM_CONTENT_TYPE}.`);

    // Fastify's own refusal of a media type at the token endpoint still names both.
    await filter.catch({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }, hostOf('/v2/auth/token'));
    expect(JSON.parse(sent.body).detail).toBe(JSON_OR_FORM);
  });
});
