import path from 'node:path';

import { GrpcOptions, Transport } from '@nestjs/microservices';

import { grpcChannelTarget } from './target';

/** How every process loads `.proto` files: camelCase fields, int64 as numbers, enums as names. */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

export const HEALTH_PACKAGE = 'grpc.health.v1';
export const HEALTH_PROTO = 'grpc/health/v1/health.proto';

/** `proto/` of the repository (or `PROTO_DIR`), read at run time. */
export function protoDir(configured?: string): string {
  return configured ?? path.resolve(process.cwd(), 'proto');
}

export interface GrpcServerSettings {
  /** The service's own package, e.g. `platform.v1`, and its file under `proto/`. */
  package: string;
  protoFile: string;
  url: string;
  protoDir?: string;
}

/** Loader settings for a service's package plus `grpc.health.v1`. */
function packageOptions(settings: GrpcServerSettings) {
  const root = protoDir(settings.protoDir);
  return {
    url: settings.url,
    package: [settings.package, HEALTH_PACKAGE],
    protoPath: [settings.protoFile, HEALTH_PROTO],
    loader: { ...PROTO_LOADER_OPTIONS, includeDirs: [root] },
  };
}

/** A gRPC server for the service's package, always also serving `grpc.health.v1.Health`. */
export function grpcServerOptions(settings: GrpcServerSettings): GrpcOptions {
  return { transport: Transport.GRPC, options: { ...packageOptions(settings), gracefulShutdown: true } };
}

/** A gRPC client of another service's package. */
export function grpcClientOptions(settings: GrpcServerSettings): GrpcOptions {
  // One address, or several balanced round-robin (see grpcChannelTarget).
  const { target, channelOptions } = grpcChannelTarget(settings.url);
  return {
    transport: Transport.GRPC,
    options: {
      ...packageOptions(settings),
      url: target,
      channelOptions: {
        // Fail fast instead of queueing calls while a backend is away.
        'grpc.initial_reconnect_backoff_ms': 200,
        'grpc.max_reconnect_backoff_ms': 2000,
        'grpc.keepalive_time_ms': 30_000,
        ...channelOptions,
      },
    },
  };
}
