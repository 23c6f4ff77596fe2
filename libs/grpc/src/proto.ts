import path from 'node:path';

import type { Server } from '@grpc/grpc-js';
import { loadSync, PackageDefinition } from '@grpc/proto-loader';
import { CustomStrategy, GrpcOptions, Transport } from '@nestjs/microservices';
import { protoPath as healthProtoPath } from 'grpc-health-check';

import { addReflection, GrpcHealth, servicesOf } from './grpc-operations';
import { requestContextGrpcServer } from './request-context.server';
import { grpcChannelTarget } from './target';

/** How every process loads `.proto` files: camelCase fields, int64 as numbers, enums as names. */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

/** The health protocol's file under `proto/`, for health clients. */
export const HEALTH_PROTO = 'grpc/health/v1/health.proto';

/**
 * Options of every grpc-js channel and server of the project. Channelz (grpc-js's introspection
 * service, on by default) counts and traces every call for a service nobody here serves or reads: it
 * is off, which leaves a call its metrics (`grpc_server_*`, the gateway's backend metrics) and logs.
 */
export const GRPC_CHANNEL_OPTIONS = { 'grpc.enable_channelz': 0 } as const;

/** Options of every client channel (Nest's clients and the raw ones of probes and CLIs). */
export const GRPC_CLIENT_CHANNEL_OPTIONS = {
  ...GRPC_CHANNEL_OPTIONS,
  // Fail fast instead of queueing calls while a backend is away.
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 2000,
} as const;

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

/** Loader settings for a service's package. */
function packageOptions(settings: GrpcServerSettings) {
  const root = protoDir(settings.protoDir);
  return {
    url: settings.url,
    package: settings.package,
    protoPath: settings.protoFile,
    loader: { ...PROTO_LOADER_OPTIONS, includeDirs: [root] },
  };
}

/**
 * A gRPC server for the service's package, with server reflection and, given `health`, the standard
 * `grpc.health.v1.Health` (see GrpcHealth); `channelOptions` go to the grpc-js server. Every call is
 * handled in its request context (`requestContextGrpcServer`): the request id of its logs.
 */
export function grpcServerOptions(
  settings: GrpcServerSettings,
  operations: { health?: GrpcHealth; channelOptions?: Record<string, unknown> } = {},
): CustomStrategy {
  return {
    strategy: requestContextGrpcServer({
      ...packageOptions(settings),
      gracefulShutdown: true,
      channelOptions: { ...GRPC_CHANNEL_OPTIONS, ...operations.channelOptions },
      onLoadPackageDefinition: (definition: PackageDefinition, server: Pick<Server, 'addService'>) => {
        if (operations.health) {
          operations.health.addToServer(server, servicesOf(definition, settings.package));
          addReflection(server, { ...definition, ...healthDefinition() });
        } else {
          addReflection(server, definition);
        }
      },
    }),
  };
}

/** The health protocol as `grpc-health-check` serves it (Check, Watch and List), for reflection. */
const healthDefinition = () => loadSync(healthProtoPath, PROTO_LOADER_OPTIONS);

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
        ...GRPC_CLIENT_CHANNEL_OPTIONS,
        'grpc.keepalive_time_ms': 30_000,
        // No message compression (grpc-js's default, stated): small messages on a local network.
        'grpc.default_compression_algorithm': 0,
        ...channelOptions,
      },
    },
  };
}
