import { ReadinessCheck } from '@acct/observability';
import { describeByReflection, freePort, listServicesByReflection, StandardHealthClient, waitFor } from '@acct/testing';
import { status } from '@grpc/grpc-js';
import { INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

import { GrpcHealth } from './grpc-operations';
import { grpcServerOptions } from './proto';

@Module({})
class EmptyModule {}

describe('standard gRPC operations of a service', () => {
  let server: INestMicroservice;
  let health: GrpcHealth;
  let client: StandardHealthClient;
  let address: string;
  let ready = false;
  const schema: ReadinessCheck = {
    name: 'database',
    check: () => (ready ? Promise.resolve() : Promise.reject(new Error('2 migrations pending'))),
  };

  beforeAll(async () => {
    address = `127.0.0.1:${await freePort()}`;
    health = new GrpcHealth(() => [schema]);
    server = await NestFactory.createMicroservice(EmptyModule, {
      ...grpcServerOptions(
        { package: 'platform.v1', protoFile: 'platform/v1/platform.proto', url: address },
        { health },
      ),
      logger: false,
    });
    await server.listen();
    client = new StandardHealthClient(address);
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  it('lists its own service and health through reflection, and describes them', async () => {
    const services = await listServicesByReflection(address);
    expect(services.sort()).toEqual(['grpc.health.v1.Health', 'platform.v1.PlatformService']);
    expect(await describeByReflection(address, 'platform.v1.PlatformService')).toBeGreaterThan(0);
    expect(await describeByReflection(address, 'grpc.health.v1.Health')).toBeGreaterThan(0);
  });

  it('answers Check from the readiness checks, for the server and its service, and NOT_FOUND otherwise', async () => {
    ready = false;
    expect(await client.check('')).toEqual({ status: 'NOT_SERVING' });
    expect(await client.check('platform.v1.PlatformService')).toEqual({ status: 'NOT_SERVING' });
    ready = true;
    expect(await client.check('')).toEqual({ status: 'SERVING' });
    expect(await client.check('platform.v1.PlatformService')).toEqual({ status: 'SERVING' });
    expect(await client.check('no.such.Service')).toEqual({ code: status.NOT_FOUND });
  });

  it('streams changes on Watch, SERVICE_UNKNOWN for an unknown service, and ends the streams on shutdown', async () => {
    ready = true;
    await health.refresh();
    const watch = client.watch('platform.v1.PlatformService');
    const unknown = client.watch('no.such.Service');
    await waitFor('first status', () => (watch.statuses.length > 0 ? true : undefined));
    expect(watch.statuses).toEqual(['SERVING']);
    ready = false;
    await waitFor('NOT_SERVING pushed', () => (watch.statuses.length > 1 ? true : undefined));
    expect(watch.statuses).toEqual(['SERVING', 'NOT_SERVING']);
    ready = true;
    await waitFor('SERVING pushed', () => (watch.statuses.length > 2 ? true : undefined));
    expect(watch.statuses).toEqual(['SERVING', 'NOT_SERVING', 'SERVING']);
    await waitFor('unknown answered', () => (unknown.statuses.length > 0 ? true : undefined));
    expect(unknown.statuses).toEqual(['SERVICE_UNKNOWN']);
    unknown.cancel();

    health.stop();
    await watch.ended;
    expect(watch.statuses.at(-1)).toBe('NOT_SERVING');
    expect(await client.check('')).toEqual({ status: 'NOT_SERVING' });
  });
});
