import { Controller, Get, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Registry } from 'prom-client';

import { Public, RequireScope } from '../auth/access.decorators';
import { loadGatewayConfig } from '../config';
import { GatewayModule } from '../gateway.module';
import { RateLimited } from '../rate-limits/rate-limited.decorator';
import { assertRoutesDeclared, routeDeclarations } from './route-declarations';
import { RouteTable } from './route-table';

const appOf = (module: unknown) =>
  NestFactory.create<NestFastifyApplication>(module as never, new FastifyAdapter(), { logger: false });

describe('route declarations', () => {
  describe('of the gateway', () => {
    let app: NestFastifyApplication;

    beforeAll(async () => {
      // The real module: every controller the gateway registers; nothing is started.
      app = await appOf(GatewayModule.forRoot(loadGatewayConfig({}), new RouteTable(), new Registry()));
    });

    afterAll(async () => {
      await app?.close();
    });

    it('declare a rate-limit group and a scope (or @Public) on every route, so the gateway starts', () => {
      const routes = routeDeclarations(app);
      expect(routes.length).toBeGreaterThanOrEqual(13);
      for (const route of routes) {
        expect({ route: route.handler, group: route.rateLimitGroup }).toEqual({
          route: route.handler,
          group: expect.any(String),
        });
        expect({ route: route.handler, protectedOrPublic: route.isPublic !== (route.scope !== undefined) }).toEqual({
          route: route.handler,
          protectedOrPublic: true,
        });
      }
      expect(() => assertRoutesDeclared(app)).not.toThrow();
    });

    // Contract §2's endpoint groups and interface §4's scopes, route by route.
    it.each([
      ['POST /v2/auth/token', 'auth', 'public'],
      ['GET /v2/auth/jwks', 'default', 'public'],
      ['POST /v2/users', 'users.write', 'users:write'],
      ['GET /v2/users/me', 'users.read', 'users:read'],
      ['GET /v2/users/:id', 'users.read', 'users:read'],
      ['POST /v2/users/me/password', 'users.write', 'public'],
      ['POST /v2/users/:id/reset-password', 'users.write', 'users:write'],
      ['POST /v2/users/me/mfa/totp', 'users.write', 'users:read'],
      ['POST /v2/users/me/mfa/totp/confirm', 'users.write', 'users:read'],
      ['GET /v2/system/health', 'system.health', 'public'],
      ['GET /v2/system/rate-limits', 'system.read', 'system:read'],
      ['GET /v2/system/quota', 'system.read', 'system:read'],
      ['GET /activate', 'default', 'public'],
    ])('%s counts in %s and needs %s', (route, group, access) => {
      const declared = routeDeclarations(app).find(({ method, path }) => `${method} ${path}` === route);
      expect(
        declared && { group: declared.rateLimitGroup, access: declared.isPublic ? 'public' : declared.scope },
      ).toEqual({ group, access });
    });
  });

  describe('that are incomplete', () => {
    @Controller('v2/things')
    class CarelessController {
      @Get()
      @RequireScope('things:read')
      list() {
        return [];
      }

      @Post()
      @RateLimited('users.write')
      create() {
        return {};
      }

      @Get('open')
      @Public()
      @RateLimited('default')
      open() {
        return {};
      }
    }

    @Module({ controllers: [CarelessController] })
    class CarelessModule {}

    it('stop the start-up, naming each route and what it lacks', async () => {
      const app = await appOf(CarelessModule);
      try {
        expect(() => assertRoutesDeclared(app)).toThrow(
          [
            'Incomplete route declarations:',
            '- GET /v2/things (CarelessController.list) needs a rate-limit group (@RateLimited)',
            '- POST /v2/things (CarelessController.create) needs a scope (@RequireScope) or @Public()',
          ].join('\n'),
        );
      } finally {
        await app.close();
      }
    });
  });
});
