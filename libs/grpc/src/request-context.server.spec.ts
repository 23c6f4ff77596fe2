import { currentRequestId, REQUEST_ID_HEADER } from '@acct/observability';
import { freePort } from '@acct/testing';
import { Metadata } from '@grpc/grpc-js';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GrpcMethod } from '@nestjs/microservices';

import { grpcServerOptions } from './proto';
import { callRaw, createRawClient, RawClient } from './raw-client';

/** Answers GetQuota with the request id its handler sees after an await (in `orgId`). */
@Controller()
class EchoRequestId {
  @GrpcMethod('PlatformService', 'GetQuota')
  async quota() {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { orgId: currentRequestId() ?? 'none', quotas: [] };
  }
}

@Module({ controllers: [EchoRequestId] })
class EchoModule {}

describe('the gRPC server of every service: each call in its request context', () => {
  let server: INestMicroservice;
  let client: RawClient;

  beforeAll(async () => {
    const address = `127.0.0.1:${await freePort()}`;
    server = await NestFactory.createMicroservice(EchoModule, {
      ...grpcServerOptions({ package: 'platform.v1', protoFile: 'platform/v1/platform.proto', url: address }),
      logger: false,
    });
    await server.listen();
    client = createRawClient('platform/v1/platform.proto', 'platform.v1.PlatformService', address);
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  const requestIdSeen = async (requestId?: string) => {
    const metadata = new Metadata();
    if (requestId !== undefined) metadata.set(REQUEST_ID_HEADER, requestId);
    const answer = await callRaw<object, { orgId: string }>(client, 'getQuota', {}, 5000, metadata);
    return answer.orgId;
  };

  it("keeps the caller's request id through the handler's awaits, each concurrent call its own", async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `req-${index}`);
    expect(await Promise.all(ids.map((id) => requestIdSeen(id)))).toEqual(ids);
  });

  it('gives a call without a sane request id a new one', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const seen = await Promise.all([requestIdSeen(), requestIdSeen('has spaces'), requestIdSeen('x'.repeat(200))]);
    for (const id of seen) expect(id).toMatch(uuid);
    expect(new Set(seen).size).toBe(3);
  });
});
