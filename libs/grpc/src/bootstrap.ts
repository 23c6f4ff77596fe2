import { commonEnv, ConfigError, loadConfig, millis } from '@acct/config';
import {
  createLogger,
  exitGracefullyOnSignals,
  NestPinoLogger,
  READINESS_CHECKS,
  ReadinessCheck,
  reduceMemoryWhenIdle,
} from '@acct/observability';
import { DynamicModule, INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestMicroservice } from '@nestjs/microservices';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LevelWithSilent } from 'pino';
import { Registry } from 'prom-client';

import { grpcServerMetrics } from './grpc-metrics';
import { GrpcHealth } from './grpc-operations';
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
  /** The process's metrics registry (also given to its module): gRPC server metrics go there. */
  registry: Registry;
}

/**
 * `SHUTDOWN_GRACE_MS` (default 20 s): the longest a process takes to stop after SIGTERM. Keep it below
 * Kubernetes' terminationGracePeriodSeconds minus the preStop sleep (30 s − 5 s in k8s/base).
 */
export function shutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  return loadConfig({ SHUTDOWN_GRACE_MS: millis(20_000) }, env).SHUTDOWN_GRACE_MS;
}

/**
 * grpc-js server options that make clients rebalance: every connection is closed (GOAWAY) after
 * `GRPC_MAX_CONNECTION_AGE_MS` (default 2 min, ±10 % jitter by grpc-js), calls still running get
 * `GRPC_MAX_CONNECTION_AGE_GRACE_MS` (default 10 s) to finish. The client reconnects and resolves the
 * service name again, so instances added since (a scale-up behind a headless Service) get calls.
 */
export function grpcServerChannelOptions(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(
    { GRPC_MAX_CONNECTION_AGE_MS: millis(120_000), GRPC_MAX_CONNECTION_AGE_GRACE_MS: millis(10_000) },
    env,
  );
  return {
    'grpc.max_connection_age_ms': config.GRPC_MAX_CONNECTION_AGE_MS,
    'grpc.max_connection_age_grace_ms': config.GRPC_MAX_CONNECTION_AGE_GRACE_MS,
  };
}

/**
 * Stops the gRPC server the graceful way (new calls refused, calls in flight finish) without closing
 * the rest of the app: the app's own close() then runs the module hooks once, after the drain.
 */
export async function drainGrpcServer(microservice: INestMicroservice): Promise<void> {
  if (microservice instanceof NestMicroservice) microservice.setIsTerminated(true);
  await microservice.close();
}

/**
 * Starts a backend service: its gRPC server (own package, grpc.health.v1 from the readiness checks,
 * server reflection, server metrics) and
 * its ops HTTP port (/livez, /readyz, /metrics). On SIGTERM/SIGINT /readyz turns 503, the gRPC server
 * refuses new calls and lets the ones in flight finish, then consumers, relays and connections close
 * and the process exits 0 (within SHUTDOWN_GRACE_MS).
 */
export async function startGrpcService(settings: GrpcServiceSettings): Promise<NestFastifyApplication> {
  const graceMs = shutdownGraceMs();
  const logger = createLogger(settings.name, settings.logLevel);
  const app = await NestFactory.create<NestFastifyApplication>(settings.module, new FastifyAdapter(), {
    logger: new NestPinoLogger(logger),
  });
  const checks = app.get<ReadinessCheck[]>(READINESS_CHECKS);
  const health = new GrpcHealth(() => checks);
  const server = grpcServerOptions(
    {
      package: settings.package,
      protoFile: settings.protoFile,
      url: `${settings.host}:${settings.grpcPort}`,
      protoDir: settings.protoDir,
    },
    {
      health,
      channelOptions: { ...grpcServerChannelOptions(), interceptors: [grpcServerMetrics(settings.registry)] },
    },
  );
  const microservice = app.connectMicroservice(server, { inheritAppConfig: true });
  await app.startAllMicroservices();
  await app.listen(settings.opsPort, settings.host);
  exitGracefullyOnSignals({
    logger,
    graceMs,
    drain: () => {
      health.stop();
      return drainGrpcServer(microservice);
    },
    close: () => app.close(),
  });
  logger.info({ grpc_port: settings.grpcPort, ops_port: settings.opsPort }, `${settings.name} started`);
  return app;
}

/**
 * Runs a process's main; a bad configuration or a failed start ends it with the reason and exit 1.
 * Once started, the process gives back the memory a load left behind when it is idle again
 * (`reduceMemoryWhenIdle`), so its RSS after a load is what it needs, not what the load needed.
 */
export function runMain(name: string, main: () => Promise<unknown>): void {
  main()
    .then(() => {
      const logger = createLogger(name, loadConfig({ LOG_LEVEL: commonEnv.LOG_LEVEL }).LOG_LEVEL);
      const mib = (bytes: number) => Math.round(bytes / 1_048_576);
      reduceMemoryWhenIdle((before, after) =>
        logger.info({ rss_mib_before: mib(before), rss_mib_after: mib(after) }, 'idle after a load: memory given back'),
      );
    })
    .catch((error: unknown) => {
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
