import { ConfigError } from '@acct/config';
import { createLogger, NestPinoLogger } from '@acct/observability';
import { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LevelWithSilent } from 'pino';

import { grpcServerOptions } from './proto';

export interface GrpcServiceSettings {
  name: string;
  module: DynamicModule;
  package: string;
  protoFile: string;
  host: string;
  grpcPort: number;
  opsPort: number;
  logLevel: LevelWithSilent;
  protoDir?: string;
}

/**
 * Starts a backend service: its gRPC server (own package + grpc.health.v1) and its ops HTTP port
 * (/livez, /readyz, /metrics). SIGTERM/SIGINT close both: in-flight calls finish, new ones are refused.
 */
export async function startGrpcService(settings: GrpcServiceSettings): Promise<NestFastifyApplication> {
  const logger = createLogger(settings.name, settings.logLevel);
  const app = await NestFactory.create<NestFastifyApplication>(settings.module, new FastifyAdapter(), {
    logger: new NestPinoLogger(logger),
  });
  app.connectMicroservice(
    grpcServerOptions({
      package: settings.package,
      protoFile: settings.protoFile,
      url: `${settings.host}:${settings.grpcPort}`,
      protoDir: settings.protoDir,
    }),
    { inheritAppConfig: true },
  );
  app.enableShutdownHooks();
  await app.startAllMicroservices();
  await app.listen(settings.opsPort, settings.host);
  logger.info({ grpc_port: settings.grpcPort, ops_port: settings.opsPort }, `${settings.name} started`);
  return app;
}

/** Runs a process's main; a bad configuration or a failed start ends it with the reason and exit 1. */
export function runMain(name: string, main: () => Promise<unknown>): void {
  main().catch((error: unknown) => {
    const message =
      error instanceof ConfigError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    process.stderr.write(`${JSON.stringify({ level: 'fatal', service: name, message })}\n`);
    process.exit(1);
  });
}
