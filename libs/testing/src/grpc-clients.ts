import path from 'node:path';

import {
  CallOptions,
  ChannelCredentials,
  Client,
  ClientDuplexStream,
  ClientReadableStream,
  GrpcObject,
  loadPackageDefinition,
  Metadata,
  ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';

interface ReflectionStub extends Client {
  ServerReflectionInfo(metadata: Metadata, options: CallOptions): ClientDuplexStream<object, ReflectionAnswer>;
}

interface HealthStub extends Client {
  Check(
    request: { service: string },
    metadata: Metadata,
    options: CallOptions,
    callback: (error: ServiceError | null, answer?: { status: string }) => void,
  ): void;
  Watch(request: { service: string }): ClientReadableStream<{ status: string }>;
}

interface ReflectionAnswer {
  list_services_response?: { service: Array<{ name: string }> };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number };
}

/** One request on a `grpc.reflection.v1.ServerReflection/ServerReflectionInfo` stream, and its answer. */
async function askReflection(address: string, request: Record<string, string>): Promise<ReflectionAnswer> {
  const reflectionProto = path.join(
    path.dirname(require.resolve('@grpc/reflection/package.json')),
    'build/proto/grpc/reflection/v1/reflection.proto',
  );
  const Reflection = serviceClient<ReflectionStub>(reflectionProto, 'grpc.reflection.v1.ServerReflection');
  const client = new Reflection(address, ChannelCredentials.createInsecure());
  try {
    return await new Promise<ReflectionAnswer>((resolve, reject) => {
      const call = client.ServerReflectionInfo(new Metadata(), { deadline: Date.now() + 5000 });
      call.on('data', (answer: ReflectionAnswer) => {
        resolve(answer);
        call.end();
      });
      call.on('error', reject);
      call.write(request);
    });
  } finally {
    client.close();
  }
}

/** What `grpcurl list` does: the services a server names through reflection. */
export async function listServicesByReflection(address: string): Promise<string[]> {
  const answer = await askReflection(address, { list_services: '' });
  return (answer.list_services_response?.service ?? []).map((service) => service.name);
}

/** What `grpcurl describe <symbol>` needs: how many file descriptors the server sends for it (0: unknown). */
export async function describeByReflection(address: string, symbol: string): Promise<number> {
  const answer = await askReflection(address, { file_containing_symbol: symbol });
  return answer.file_descriptor_response?.file_descriptor_proto.length ?? 0;
}

/**
 * A `grpc.health.v1.Health` client as generic tools (grpcurl, Kubernetes' gRPC probe) use it, from the
 * protocol's own proto file (the one `grpc-health-check` ships), not the repository's.
 */
export class StandardHealthClient {
  private readonly client: HealthStub;

  constructor(address: string) {
    const Health = serviceClient<HealthStub>(healthProtoPath, 'grpc.health.v1.Health');
    this.client = new Health(address, ChannelCredentials.createInsecure());
  }

  /** The status, or the gRPC status code of the refusal (`NOT_FOUND` is 5). */
  check(service = ''): Promise<{ status?: string; code?: number }> {
    return new Promise((resolve) => {
      this.client.Check({ service }, new Metadata(), { deadline: Date.now() + 5000 }, (error, answer) =>
        resolve(error ? { code: error.code } : { status: answer?.status }),
      );
    });
  }

  /** Opens a `Watch` stream; every status it sends is pushed to `statuses`. */
  watch(service = ''): { statuses: string[]; ended: Promise<void>; cancel(): void } {
    const statuses: string[] = [];
    const call = this.client.Watch({ service });
    call.on('data', (answer: { status: string }) => statuses.push(answer.status));
    const ended = new Promise<void>((resolve) => {
      call.on('end', () => resolve());
      call.on('error', () => resolve());
    });
    return { statuses, ended, cancel: () => call.cancel() };
  }

  close(): void {
    this.client.close();
  }
}

function serviceClient<T extends Client>(
  protoFile: string,
  service: string,
): new (address: string, credentials: ChannelCredentials) => T {
  const definition = loadSync(protoFile, {
    keepCase: true,
    enums: String,
    defaults: true,
    oneofs: true,
    longs: Number,
  });
  let node: unknown = loadPackageDefinition(definition);
  for (const part of service.split('.')) node = (node as GrpcObject)[part];
  return node as new (address: string, credentials: ChannelCredentials) => T;
}
