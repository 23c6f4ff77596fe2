import path from 'node:path';

import { waitFor } from '@acct/testing';
import {
  experimental,
  GrpcObject,
  loadPackageDefinition,
  Server,
  ServerCredentials,
  ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

import { grpcServerChannelOptions } from './bootstrap';
import { HEALTH_PROTO, PROTO_LOADER_OPTIONS, protoDir } from './proto';
import { callRaw, createRawClient } from './raw-client';

/**
 * DNS as a Kubernetes headless Service gives it: a name whose address list changes as pods come and
 * go, read again whenever the channel asks (grpc-js asks when a connection ends). The real `dns:`
 * resolver does the same against real DNS, at most every 30 s (`grpc.dns_min_time_between_resolutions_ms`).
 */
class FleetResolver implements experimental.Resolver {
  static readonly addresses = new Map<string, Array<{ host: string; port: number }>>();
  static resolutions = 0;
  private reported?: string;

  constructor(
    private readonly target: experimental.GrpcUri,
    private readonly listener: experimental.ResolverListener,
  ) {}

  static getDefaultAuthority(target: experimental.GrpcUri) {
    return target.path;
  }

  /** Answers when the list changed since the last answer, as a DNS resolver rate-limits itself. */
  updateResolution() {
    FleetResolver.resolutions += 1;
    const addresses = FleetResolver.addresses.get(this.target.path) ?? [];
    const key = JSON.stringify(addresses);
    if (key === this.reported) return;
    this.reported = key;
    const endpoints = addresses.map((address) => ({ addresses: [address] }));
    setImmediate(() => this.listener({ ok: true, value: endpoints }, {}, null, ''));
  }

  destroy() {}
}
experimental.registerResolver('fleet', FleetResolver);

function healthService() {
  const definition = loadSync(path.join(protoDir(), HEALTH_PROTO), {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [protoDir()],
  });
  const health = ((loadPackageDefinition(definition).grpc as GrpcObject).health as GrpcObject).v1 as GrpcObject;
  return (health.Health as ServiceClientConstructor).service;
}

/** One instance of a service on its own loopback address, with the servers' connection age settings. */
async function startInstance(host: string, seen: string[]) {
  const server = new Server(
    grpcServerChannelOptions({ GRPC_MAX_CONNECTION_AGE_MS: '500', GRPC_MAX_CONNECTION_AGE_GRACE_MS: '200' }),
  );
  server.addService(healthService(), {
    check: (_call: unknown, callback: (error: null, response: { status: string }) => void) => {
      seen.push(host);
      callback(null, { status: 'SERVING' });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:0`, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { server, address: { host, port } };
}

describe('gRPC load balancing behind a name with several addresses', () => {
  it('spreads calls over every instance, and moves to one started later once connections reach their age', async () => {
    const seen: string[] = [];
    const first = await startInstance('127.0.0.2', seen);
    const second = await startInstance('127.0.0.3', seen);
    FleetResolver.addresses.set('identity', [first.address, second.address]);
    const client = createRawClient(HEALTH_PROTO, 'grpc.health.v1.Health', 'fleet:///identity');
    let third: Awaited<ReturnType<typeof startInstance>> | undefined;
    try {
      for (let index = 0; index < 20; index += 1) await callRaw(client, 'check', { service: '' }, 2000);
      expect(new Set(seen)).toEqual(new Set(['127.0.0.2', '127.0.0.3']));
      // round_robin, not pick_first: neither instance takes (nearly) everything.
      expect(seen.filter((host) => host === '127.0.0.2').length).toBeGreaterThanOrEqual(5);
      expect(seen.filter((host) => host === '127.0.0.3').length).toBeGreaterThanOrEqual(5);

      // Scale-up: a third pod appears in DNS. Nothing tells the client; its connections age out.
      third = await startInstance('127.0.0.4', seen);
      FleetResolver.addresses.set('identity', [first.address, second.address, third.address]);
      const resolutionsBefore = FleetResolver.resolutions;
      await waitFor(
        'a call on the new instance',
        async () => {
          await callRaw(client, 'check', { service: '' }, 2000);
          return seen.includes('127.0.0.4') ? true : undefined;
        },
        { intervalMs: 20 },
      );
      expect(FleetResolver.resolutions).toBeGreaterThan(resolutionsBefore);

      seen.length = 0;
      for (let index = 0; index < 30; index += 1) await callRaw(client, 'check', { service: '' }, 2000);
      expect(new Set(seen)).toEqual(new Set(['127.0.0.2', '127.0.0.3', '127.0.0.4']));
    } finally {
      client.close();
      for (const instance of [first, second, third]) instance?.server.forceShutdown();
    }
  });

  it('reads the connection age settings from the environment, with documented defaults', () => {
    expect(grpcServerChannelOptions({})).toEqual({
      'grpc.max_connection_age_ms': 120_000,
      'grpc.max_connection_age_grace_ms': 10_000,
    });
    expect(
      grpcServerChannelOptions({ GRPC_MAX_CONNECTION_AGE_MS: '30000', GRPC_MAX_CONNECTION_AGE_GRACE_MS: '5000' }),
    ).toEqual({ 'grpc.max_connection_age_ms': 30_000, 'grpc.max_connection_age_grace_ms': 5_000 });
  });
});
