import { READINESS_CHECKS, ReadinessCheck, withTimeout } from '@acct/observability';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';

import { PublicRpc } from './caller.guard';

const CHECK_TIMEOUT_MS = 1000;

type ServingStatus = 'SERVING' | 'NOT_SERVING';

/**
 * `grpc.health.v1.Health/Check`: SERVING while every readiness check of the process passes (its
 * database, for example), NOT_SERVING otherwise.
 */
@Controller()
@PublicRpc()
export class GrpcHealthController {
  constructor(@Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[]) {}

  @GrpcMethod('Health', 'Check')
  async check(): Promise<{ status: ServingStatus }> {
    const results = await Promise.allSettled(
      this.checks.map((readiness) => withTimeout(readiness.check(), CHECK_TIMEOUT_MS, 'readiness check timed out')),
    );
    const serving = results.every((result) => result.status === 'fulfilled');
    return { status: serving ? 'SERVING' : 'NOT_SERVING' };
  }
}
