import path from 'node:path';

import { ChannelCredentials, GrpcObject, loadPackageDefinition, ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

import { HEALTH_PROTO, PROTO_LOADER_OPTIONS, protoDir } from './proto';

type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

type CheckMethod = (
  request: { service: string },
  options: { deadline: Date },
  callback: (error: Error | null, response?: { status: ServingStatus }) => void,
) => void;

/** A plain `grpc.health.v1.Health` client, for probes that must not depend on Nest. */
export class HealthClient {
  constructor(private readonly client: InstanceType<ServiceClientConstructor>) {}

  check(timeoutMs: number, service = ''): Promise<ServingStatus> {
    return new Promise((resolve, reject) => {
      const check = (this.client as unknown as { check: CheckMethod }).check.bind(this.client);
      check({ service }, { deadline: new Date(Date.now() + timeoutMs) }, (error, response) =>
        error ? reject(error) : resolve(response?.status ?? 'UNKNOWN'),
      );
    });
  }

  close() {
    this.client.close();
  }
}

export function createHealthClient(address: string, configuredProtoDir?: string): HealthClient {
  const root = protoDir(configuredProtoDir);
  const definition = loadSync(path.join(root, HEALTH_PROTO), { ...PROTO_LOADER_OPTIONS, includeDirs: [root] });
  const health = (loadPackageDefinition(definition).grpc as GrpcObject).health as GrpcObject;
  const Health = (health.v1 as GrpcObject).Health as ServiceClientConstructor;
  return new HealthClient(
    new Health(address, ChannelCredentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2000,
    }),
  );
}
