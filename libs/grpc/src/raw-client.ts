import path from 'node:path';

import {
  ChannelCredentials,
  GrpcObject,
  loadPackageDefinition,
  Metadata,
  ServiceClientConstructor,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

import { GRPC_CLIENT_CHANNEL_OPTIONS, PROTO_LOADER_OPTIONS, protoDir } from './proto';
import { grpcChannelTarget } from './target';

export type RawClient = InstanceType<ServiceClientConstructor>;

/**
 * A plain grpc-js client of one service, for code that runs outside Nest's DI (probes, token
 * verifiers, the CLI). `service` is fully qualified: `grpc.health.v1.Health`.
 */
export function createRawClient(protoFile: string, service: string, address: string, configuredProtoDir?: string) {
  const root = protoDir(configuredProtoDir);
  const definition = loadSync(path.join(root, protoFile), { ...PROTO_LOADER_OPTIONS, includeDirs: [root] });
  let node: unknown = loadPackageDefinition(definition);
  for (const part of service.split('.')) node = (node as GrpcObject)[part];
  const Client = node as ServiceClientConstructor;
  const { target, channelOptions } = grpcChannelTarget(address);
  return new Client(target, ChannelCredentials.createInsecure(), {
    ...GRPC_CLIENT_CHANNEL_OPTIONS,
    ...channelOptions,
  });
}

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: Date },
  callback: (error: Error | null, response?: Res) => void,
) => void;

/** Calls one unary method of a raw client with a deadline. */
export function callRaw<Req, Res>(
  client: RawClient,
  method: string,
  request: Req,
  timeoutMs: number,
  metadata: Metadata = new Metadata(),
): Promise<Res> {
  const call = (client as unknown as Record<string, UnaryMethod<Req, Res>>)[method].bind(client);
  return new Promise((resolve, reject) => {
    call(request, metadata, { deadline: new Date(Date.now() + timeoutMs) }, (error, response) =>
      error ? reject(error) : resolve(response as Res),
    );
  });
}
