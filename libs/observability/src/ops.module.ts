import { Controller, DynamicModule, Get, Header, Inject, Module, Res } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Registry } from 'prom-client';

import { isDraining } from './shutdown';

/** Something a process needs before it takes traffic; `check` rejects when it is not there. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<void>;
}

export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');

/** Down from the moment the process was told to stop, so Kubernetes routes no new work to it. */
const notShuttingDown: ReadinessCheck = {
  name: 'shutdown',
  check: () => (isDraining() ? Promise.reject(new Error('shutting down')) : Promise.resolve()),
};

/**
 * The ops port of every process: `/livez` says only that the process answers (so Kubernetes never
 * restarts a pod because a dependency is down), `/readyz` runs the process's readiness checks (503
 * once shutdown began) and `/metrics` serves Prometheus text.
 */
@Controller()
export class OpsController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
  ) {}

  @Get('livez')
  livez() {
    return { status: 'ok' };
  }

  @Get('readyz')
  // Without swaggerDocumentation terminus does not load @nestjs/swagger (with lodash and js-yaml):
  // several MiB of heap in every service for documentation the ops port never serves.
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  readyz() {
    return this.health.check(
      [notShuttingDown, ...this.checks].map((readiness) => async () => {
        const indicator = this.indicators.check(readiness.name);
        try {
          await readiness.check();
          return indicator.up();
        } catch (error) {
          return indicator.down({ message: error instanceof Error ? error.message : String(error) });
        }
      }),
    );
  }

  @Get('metrics')
  @Header('Cache-Control', 'no-store')
  async metrics(@Res() reply: FastifyReply) {
    const body = await this.registry.metrics();
    await reply.header('Content-Type', this.registry.contentType).send(body);
  }
}

export interface OpsModuleOptions {
  registry: Registry;
  /** Tokens of the readiness checks; `imports` must export them. */
  readiness?: Array<new (...args: never[]) => ReadinessCheck>;
  imports?: DynamicModule['imports'];
}

@Module({})
export class OpsModule {
  static forRoot(options: OpsModuleOptions): DynamicModule {
    const readiness = options.readiness ?? [];
    return {
      module: OpsModule,
      imports: [TerminusModule.forRoot({ logger: false }), ...(options.imports ?? [])],
      controllers: [OpsController],
      providers: [
        { provide: METRICS_REGISTRY, useValue: options.registry },
        { provide: READINESS_CHECKS, useFactory: (...checks: ReadinessCheck[]) => checks, inject: readiness },
      ],
      exports: [METRICS_REGISTRY, READINESS_CHECKS],
    };
  }
}
