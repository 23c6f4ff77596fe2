import { Module } from '@nestjs/common';

import { AuthMetrics } from './auth-metrics';

/** Auth's own metrics, one instance for every module that counts. */
@Module({ providers: [AuthMetrics], exports: [AuthMetrics] })
export class AuthMetricsModule {}
