import { Writable } from 'node:stream';

import Fastify from 'fastify';

import { logAccess } from './access-log';

describe('access log', () => {
  it('writes one line per request with method, route template, status, duration, request id and client', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const fastify = Fastify({ trustProxy: ['127.0.0.1'], genReqId: () => 'req-1' });
    logAccess(fastify, 'gateway', sink);
    fastify.get('/v2/users/:id', async (_request, reply) => reply.status(201).send({ ok: true }));
    await fastify.ready();

    await fastify.inject({
      method: 'GET',
      url: '/v2/users/6f1c?secret=x',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '203.0.113.7', authorization: 'Bearer abc' },
    });
    await fastify.inject({ method: 'POST', url: '/nowhere', remoteAddress: '198.51.100.2' });
    await fastify.close();

    expect(lines).toHaveLength(2);
    expect(lines[0]).toEqual({
      level: 'info',
      time: expect.any(String),
      service: 'gateway',
      kind: 'access',
      method: 'GET',
      route: '/v2/users/:id',
      status: 201,
      duration_ms: expect.any(Number),
      request_id: 'req-1',
      client_address: '203.0.113.7',
      message: 'GET /v2/users/:id 201',
    });
    expect(lines[1]).toMatchObject({ method: 'POST', route: 'unmatched', status: 404, client_address: '198.51.100.2' });
    expect(JSON.stringify(lines)).not.toMatch(/6f1c|secret=x|Bearer/);
  });
});
