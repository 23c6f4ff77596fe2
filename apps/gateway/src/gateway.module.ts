import { METRICS_REGISTRY } from '@acct/observability';
import { RevocationModule } from '@acct/revocation';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Registry } from 'prom-client';

import { ActivationPageController } from './activation/activation-page.controller';
import { AuditController } from './audit/audit.controller';
import { AuthModule } from './auth/auth.module';
import { BackendsModule } from './backends/backends.module';
import { GatewayIdentity } from './backends/gateway-identity';
import { GATEWAY_CONFIG, GatewayConfig } from './config';
import { HealthController } from './health/health.controller';
import { HealthReporter } from './health/health-reporter';
import { ProblemFilter } from './http/problem.filter';
import { RouteTable } from './http/route-table';
import { LockoutController } from './lockout/lockout.controller';
import { MfaController } from './mfa/mfa.controller';
import { MfaSettingsController } from './mfa/mfa-settings.controller';
import { AuthorizeController } from './oauth/authorize.controller';
import { DiscoveryController } from './oauth/discovery.controller';
import { TokenRevocationController } from './oauth/token-revocation.controller';
import { QuotaController } from './quotas/quota.controller';
import { RateLimitsModule } from './rate-limits/rate-limits.module';
import { SessionsController } from './sessions/sessions.controller';
import { TokenController } from './tokens/token.controller';
import { PasswordController } from './users/password.controller';
import { UsersController } from './users/users.controller';

@Global()
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig, routes: RouteTable, registry: Registry): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        BackendsModule,
        RevocationModule.forRoot({ configToken: GATEWAY_CONFIG, name: 'gateway' }),
        AuthModule,
        RateLimitsModule,
      ],
      controllers: [
        HealthController,
        TokenController,
        UsersController,
        PasswordController,
        QuotaController,
        ActivationPageController,
        MfaController,
        SessionsController,
        AuditController,
        LockoutController,
        MfaSettingsController,
        AuthorizeController,
        DiscoveryController,
        TokenRevocationController,
      ],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        HealthReporter,
        GatewayIdentity,
        { provide: RouteTable, useValue: routes },
        { provide: METRICS_REGISTRY, useValue: registry },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
      exports: [GATEWAY_CONFIG, METRICS_REGISTRY],
    };
  }
}
