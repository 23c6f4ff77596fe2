import path from 'node:path';

import {
  GrpcObject,
  loadPackageDefinition,
  Server,
  ServerCredentials,
  ServiceClientConstructor,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

import { HEALTH_PROTO, PROTO_LOADER_OPTIONS, protoDir } from './proto';
import { callRaw, createRawClient } from './raw-client';
import { grpcChannelTarget } from './target';

function healthService() {
  const definition = loadSync(path.join(protoDir(), HEALTH_PROTO), {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [protoDir()],
  });
  const health = ((loadPackageDefinition(definition).grpc as GrpcObject).health as GrpcObject).v1 as GrpcObject;
  return (health.Health as ServiceClientConstructor).service;
}

describe('gRPC channel targets', () => {
  it('keeps one host:port or dns:/// target as it is, balanced round-robin over what the name resolves to', () => {
    for (const address of ['identity.svc:50051', 'dns:///identity-grpc.acct.svc.cluster.local:50051']) {
      const { target, channelOptions } = grpcChannelTarget(address);
      expect(target).toBe(address);
      expect(JSON.parse(channelOptions['grpc.service_config'])).toEqual({ loadBalancingConfig: [{ round_robin: {} }] });
    }
  });

  it('turns a list of ip:port into an ipv4 target balanced round-robin', () => {
    const { target, channelOptions } = grpcChannelTarget('127.0.0.1:1001, 127.0.0.1:1002');
    expect(target).toBe('ipv4:127.0.0.1:1001,127.0.0.1:1002');
    expect(JSON.parse(channelOptions['grpc.service_config'])).toEqual({ loadBalancingConfig: [{ round_robin: {} }] });
  });

  it('spreads calls over every instance of a list, and keeps answering while one of them is away', async () => {
    const servers: Server[] = [];
    const ports: number[] = [];
    const seen: number[] = [];
    for (let index = 0; index < 2; index += 1) {
      const server = new Server();
      server.addService(healthService(), {
        check: (_call: unknown, callback: (error: null, response: { status: string }) => void) => {
          seen.push(index);
          callback(null, { status: 'SERVING' });
        },
      });
      ports.push(
        await new Promise<number>((resolve, reject) =>
          server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) =>
            error ? reject(error) : resolve(port),
          ),
        ),
      );
      servers.push(server);
    }
    const client = createRawClient(
      'grpc/health/v1/health.proto',
      'grpc.health.v1.Health',
      ports.map((port) => `127.0.0.1:${port}`).join(','),
    );
    try {
      for (let index = 0; index < 10; index += 1) await callRaw(client, 'check', { service: '' }, 2000);
      // Both instances served (round-robin starts once both are connected; pick-first would use one).
      expect(new Set(seen)).toEqual(new Set([0, 1]));
      servers[0].forceShutdown();
      seen.length = 0;
      let failures = 0;
      for (let index = 0; index < 10; index += 1) {
        await callRaw(client, 'check', { service: '' }, 2000).catch((error: { code: number }) => {
          expect(error.code).toBe(status.UNAVAILABLE);
          failures += 1;
        });
      }
      expect(failures).toBeLessThanOrEqual(1); // at most the call in flight when the instance vanished
      expect(seen.filter((instance) => instance === 1).length).toBe(10 - failures);
    } finally {
      client.close();
      for (const server of servers) server.forceShutdown();
    }
  });
});
