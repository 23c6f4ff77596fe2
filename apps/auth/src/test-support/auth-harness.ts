import { randomUUID } from 'node:crypto';

import { Clock, FakeClock } from '@acct/clock';
import { grpcServerOptions } from '@acct/grpc';
import { freePort } from '@acct/testing';
import { INestMicroservice, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { decodeJwt } from 'jose';
import { Registry } from 'prom-client';

import { AppModule } from '../app.module';
import { AuthConfig, loadAuthConfig } from '../config';
import { IdentityClient, LoginKey } from '../identity/identity.client';
import { PROTO_DIR } from './fake-identity';
import { quietNestLogs } from './quiet-logs';

export interface HarnessOptions {
  databaseUrl: string;
  clock?: FakeClock;
  /** Where identity is (a FakeIdentity); nowhere reachable by default. */
  identityAddress?: string;
  /** Replaces the identity client altogether (unit tests of the password grant). */
  identityClient?: Pick<IdentityClient, 'verifyPassword'> &
    Partial<Pick<IdentityClient, 'emailOf' | 'visibleTo' | 'loginNamesOf' | 'resolveLoginKey' | 'isActiveAdmin'>>;
  /** Replaces providers (a login step, say) with stand-ins: `{ provide: LockoutPolicy, useValue: … }`. */
  overrides?: Array<{ provide: Type<unknown>; useValue: unknown }>;
  /** Serve gRPC on a free port, as the real process does. */
  grpc?: boolean;
  env?: Record<string, string>;
}

/** The auth service as the process builds it (the real AppModule), on a test database. */
export class AuthHarness {
  private constructor(
    readonly module: TestingModule,
    readonly config: AuthConfig,
    readonly clock: FakeClock,
    private readonly server?: INestMicroservice,
  ) {}

  static async start(options: HarnessOptions): Promise<AuthHarness> {
    quietNestLogs();
    const config = loadAuthConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      PROTO_DIR,
      AUTH_DATABASE_URL: options.databaseUrl,
      AUTH_GRPC_PORT: String(await freePort()),
      // A closed port: nothing answers there.
      IDENTITY_GRPC_ADDR: options.identityAddress ?? `127.0.0.1:${await freePort()}`,
      // Its own revocation stream and notice subject: specs run in parallel on the shared Redis and
      // NATS, and one spec's "end this user's sessions" must not revoke another spec's tokens.
      REDIS_KEY_PREFIX: `test:auth:${randomUUID()}:`,
      ...options.env,
    });
    const clock = options.clock ?? new FakeClock();
    let builder = Test.createTestingModule({ imports: [AppModule.forRoot(config, new Registry())] })
      .overrideProvider(Clock)
      .useValue(clock);
    if (options.identityClient) {
      // A stand-in without ResolveLoginKey counts each username under itself (as identity does an unknown
      // one); without isActiveAdmin, a caller is the admin its token says it is.
      const defaults: Partial<IdentityClient> = {
        resolveLoginKey: (username: string): Promise<LoginKey> => Promise.resolve({ key: username }),
        isActiveAdmin: (callerToken: string) =>
          Promise.resolve((decodeJwt(callerToken).roles as string[] | undefined)?.includes('admin') ?? false),
      };
      const standIn = options.identityClient;
      const client = new Proxy(standIn, {
        get: (target, property, receiver): unknown =>
          property in target ? Reflect.get(target, property, receiver) : Reflect.get(defaults, property),
      });
      builder = builder.overrideProvider(IdentityClient).useValue(client);
    }
    for (const { provide, useValue } of options.overrides ?? []) {
      builder = builder.overrideProvider(provide).useValue(useValue);
    }
    const module = await builder.compile();
    if (!options.grpc) {
      await module.init();
      return new AuthHarness(module, config, clock);
    }
    const server = module.createNestMicroservice(
      grpcServerOptions({
        package: 'auth.v1',
        protoFile: 'auth/v1/auth.proto',
        url: this.address(config),
        protoDir: PROTO_DIR,
      }),
    );
    await server.listen();
    return new AuthHarness(module, config, clock, server);
  }

  private static address(config: AuthConfig) {
    return `127.0.0.1:${config.AUTH_GRPC_PORT}`;
  }

  /** host:port of the gRPC server. */
  get address(): string {
    return AuthHarness.address(this.config);
  }

  get<T>(type: Type<T>): T {
    return this.module.get(type, { strict: false });
  }

  async close(): Promise<void> {
    if (this.server) await this.server.close();
    else await this.module.close();
  }
}
