import path from 'node:path';

import { platformV1 } from '@acct/contracts';
import { DomainError } from '@acct/problem';
import { freePort } from '@acct/testing';
import {
  GrpcObject,
  loadPackageDefinition,
  Server,
  ServerCredentials,
  ServerUnaryCall,
  ServiceClientConstructor,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { Controller, Global, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GrpcMethod } from '@nestjs/microservices';

import { GrpcClient, GrpcClientsModule } from './grpc-client';
import { grpcServerOptions, PROTO_LOADER_OPTIONS, protoDir } from './proto';
import { callRaw, createRawClient, RawClient } from './raw-client';
import { PLATFORM_SERVICE } from './services';

/** Service A's own deadline for its calls to B (GRPC_DEADLINE_MS). */
const OWN_DEADLINE_MS = 3000;
/**
 * How much later than its caller's a server's deadline may be: the wire carries the time left, which
 * the server counts from when it reads it (two hops, in one busy test process).
 */
const TRANSIT_MS = 250;

/** B: a plain grpc-js server that records the deadline of every call it gets. */
const seenByB: number[] = [];

async function startB(address: string): Promise<Server> {
  const definition = loadSync(path.join(protoDir(), PLATFORM_SERVICE.protoFile), {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [protoDir()],
  });
  const platform = (loadPackageDefinition(definition).platform as GrpcObject).v1 as GrpcObject;
  const server = new Server();
  server.addService((platform.PlatformService as ServiceClientConstructor).service, {
    getQuota: (call: ServerUnaryCall<unknown, unknown>, callback: (error: null, response: object) => void) => {
      seenByB.push(Number(call.getDeadline()));
      callback(null, { orgId: 'b', quotas: [] });
    },
  });
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
  return server;
}

class BGrpc extends GrpcClient<platformV1.PlatformServiceClient> {}

const CONFIG = Symbol('config');

/** A: a service on the project's gRPC server whose GetQuota calls B; `dimension: "late"` waits first. */
@Controller()
class CallsB {
  /** What A's last call to B ended with: `ok` or the DomainError's code. */
  static outcome: Promise<string>;

  constructor(private readonly b: BGrpc) {}

  @GrpcMethod('PlatformService', 'GetQuota')
  quota({ dimension }: { dimension: string }) {
    CallsB.outcome = (async () => {
      if (dimension === 'late') await new Promise((resolve) => setTimeout(resolve, 300));
      return this.b.call('getQuota', { dimension: '', name: '' }).then(
        () => 'ok',
        (error: DomainError) => error.code,
      );
    })();
    return CallsB.outcome.then((outcome) => ({ orgId: outcome, quotas: [] }));
  }
}

describe('deadline propagation: calls made while serving a call end no later than it', () => {
  let a: INestMicroservice;
  let b: Server;
  let client: RawClient;

  beforeAll(async () => {
    const addressA = `127.0.0.1:${await freePort()}`;
    const addressB = `127.0.0.1:${await freePort()}`;
    b = await startB(addressB);

    @Global()
    @Module({ providers: [{ provide: CONFIG, useValue: { GRPC_DEADLINE_MS: OWN_DEADLINE_MS } }], exports: [CONFIG] })
    class ConfigModule {}

    @Module({
      imports: [
        ConfigModule,
        GrpcClientsModule.register(CONFIG, [{ client: BGrpc, contract: PLATFORM_SERVICE, address: () => addressB }]),
      ],
      controllers: [CallsB],
    })
    class AModule {}

    a = await NestFactory.createMicroservice(AModule, {
      ...grpcServerOptions({ package: 'platform.v1', protoFile: PLATFORM_SERVICE.protoFile, url: addressA }),
      logger: false,
    });
    await a.listen();
    client = createRawClient(PLATFORM_SERVICE.protoFile, 'platform.v1.PlatformService', addressA);
  });

  afterAll(async () => {
    client?.close();
    await a?.close();
    b?.forceShutdown();
  });

  beforeEach(() => {
    seenByB.length = 0;
  });

  /** Calls A with a deadline `timeoutMs` from now; resolves to that deadline and A's answer (or failure). */
  const callA = async (timeoutMs: number, dimension = '') => {
    const answer = callRaw<object, { orgId: string }>(client, 'getQuota', { dimension }, timeoutMs);
    const deadline = Date.now() + timeoutMs;
    return { deadline, answer: await answer.catch((failure: { code: number }) => failure) };
  };

  it("gives the call to B the caller's deadline when it is earlier than A's own", async () => {
    const { deadline, answer } = await callA(1000);

    expect(answer).toEqual({ orgId: 'ok', quotas: [] });
    expect(seenByB).toHaveLength(1);
    expect(seenByB[0]).toBeLessThanOrEqual(deadline + TRANSIT_MS);
  });

  it("keeps A's own deadline when the caller's is later", async () => {
    const { answer } = await callA(10_000);

    expect(answer).toEqual({ orgId: 'ok', quotas: [] });
    expect(seenByB[0]).toBeLessThanOrEqual(Date.now() + OWN_DEADLINE_MS);
  });

  it("does not call B at all once the caller's deadline has passed, and fails as a timed-out call", async () => {
    const { answer } = await callA(100, 'late');

    expect(answer).toMatchObject({ code: status.DEADLINE_EXCEEDED });
    expect(await CallsB.outcome).toBe('service_unavailable');
    expect(seenByB).toEqual([]);
  });

  it('keeps its own deadline for a call made outside any incoming call (a job, a consumer)', async () => {
    const before = Date.now();
    await a.get(BGrpc).call('getQuota', { dimension: '', name: '' });

    expect(seenByB[0]).toBeGreaterThanOrEqual(before + OWN_DEADLINE_MS);
    expect(seenByB[0]).toBeLessThanOrEqual(Date.now() + OWN_DEADLINE_MS);
  });
});
