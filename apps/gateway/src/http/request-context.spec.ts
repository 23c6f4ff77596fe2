import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';

import { acceptRequestId, createLogger, NestPinoLogger } from '@acct/observability';
import { Body, Controller, Get, Logger, Module, Post } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';

import { ProblemFilter } from './problem.filter';
import { runRequestsInContext } from './request-context';
import { RouteTable } from './route-table';

@Controller('boom')
class BoomController {
  private readonly logger = new Logger('boom');

  @Get()
  async get(): Promise<never> {
    this.logger.log('about to fail');
    await new Promise((resolve) => setImmediate(resolve));
    throw new Error('unexpected');
  }

  @Post()
  async post(@Body() body: unknown): Promise<never> {
    this.logger.log(`got ${JSON.stringify(body)}`);
    await new Promise((resolve) => setImmediate(resolve));
    throw new Error('unexpected');
  }
}

/** Issue 11 item 6: every line the gateway logs about a request carries its request_id. */
describe('request context', () => {
  let app: NestFastifyApplication;
  const lines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        callback();
      },
    });
    const routes = new RouteTable();
    routes.add(['GET', 'POST'], '/boom');
    @Module({
      controllers: [BoomController],
      providers: [
        { provide: RouteTable, useValue: routes },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
    })
    class BoomModule {}
    const adapter = new FastifyAdapter({
      genReqId: (request: IncomingMessage) => acceptRequestId(request.headers['x-request-id']),
    });
    runRequestsInContext(adapter.getInstance());
    app = await NestFactory.create<NestFastifyApplication>(BoomModule, adapter, {
      logger: new NestPinoLogger(createLogger('gateway', 'info', sink)),
    });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['a request without a body', { method: 'GET' as const }],
    ['a request whose body is parsed first', { method: 'POST' as const, payload: { some: 'body' } }],
  ])('tags the handler’s lines and the 500’s error line of %s with its request_id', async (_name, shape) => {
    lines.length = 0;
    const answer = await app.inject({ ...shape, url: '/boom', headers: { 'x-request-id': 'req-500-check' } });
    expect(answer.statusCode).toBe(500);
    expect(answer.json()).toMatchObject({ code: 'internal_error', request_id: 'req-500-check' });
    const messages = lines.map((line) => [line.level, line.request_id]);
    expect(messages).toContainEqual(['error', 'req-500-check']);
    expect(messages).toContainEqual(['info', 'req-500-check']);
    expect(lines.filter((line) => line.request_id !== 'req-500-check')).toEqual([]);
  });
});
