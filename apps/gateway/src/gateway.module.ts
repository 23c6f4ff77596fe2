import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';

import { AuthModule } from './auth/auth.module';
import { BackendsModule } from './backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig } from './config';
import { HealthController } from './health/health.controller';
import { ProblemFilter } from './http/problem.filter';
import { HttpRequestContextInterceptor } from './http/request-context.interceptor';
import { RouteTable } from './http/route-table';
import { TokenController } from './tokens/token.controller';
import { UsersController } from './users/users.controller';

@Global()
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig, routes: RouteTable): DynamicModule {
    return {
      module: GatewayModule,
      imports: [BackendsModule, AuthModule],
      controllers: [HealthController, TokenController, UsersController],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: RouteTable, useValue: routes },
        { provide: APP_FILTER, useClass: ProblemFilter },
        { provide: APP_INTERCEPTOR, useClass: HttpRequestContextInterceptor },
      ],
      exports: [GATEWAY_CONFIG],
    };
  }
}
