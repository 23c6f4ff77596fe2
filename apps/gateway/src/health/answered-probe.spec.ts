import { Writable } from 'node:stream';

import { logAccess } from '@acct/observability';
import Fastify from 'fastify';

import { answeredProbe } from './answered-probe';

describe('the access log of health probes', () => {
  it('has no line for a probe answered 2xx, and one for a refused or failing probe and every other route', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const fastify = Fastify();
    logAccess(fastify, 'gateway', sink, answeredProbe);
    const health = { config: { rateLimitGroup: 'system.health' as const } };
    fastify.get<{ Querystring: { status?: string } }>('/v2/system/health', health, async (request, reply) =>
      reply.status(Number(request.query.status ?? 200)).send({ status: 'whatever' }),
    );
    fastify.get('/v2/auth/jwks', { config: { rateLimitGroup: 'auth' as const } }, () => ({ keys: [] }));
    await fastify.ready();

    for (const url of ['/v2/system/health', '/v2/system/health?status=503', '/v2/system/health?status=429']) {
      await fastify.inject({ method: 'GET', url });
    }
    await fastify.inject({ method: 'GET', url: '/v2/auth/jwks' });
    await fastify.inject({ method: 'GET', url: '/v2/system/health/nowhere' });
    await fastify.close();

    expect(lines.map(({ route, status }) => `${String(route)} ${String(status)}`)).toEqual([
      '/v2/system/health 503',
      '/v2/system/health 429',
      '/v2/auth/jwks 200',
      'unmatched 404',
    ]);
  });
});
