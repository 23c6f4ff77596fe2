import { Caller, scopesOfRoles } from '@acct/access-token';
import { Clock, FakeClock } from '@acct/clock';
import { METRICS_REGISTRY } from '@acct/observability';
import { DomainError } from '@acct/problem';
import { DynamicModule, Module, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Registry } from 'prom-client';

import { ActivationModule } from '../activation/activation.module';
import { createBootstrapService } from '../bootstrap/bootstrap.command';
import { IDENTITY_CONFIG, IdentityConfig, loadIdentityConfig } from '../config';
import { CredentialsModule } from '../credentials/credentials.module';
import { PasswordsModule } from '../passwords/passwords.module';
import { PrismaService } from '../prisma/prisma.service';
import { UsersModule } from '../users/users.module';
import { createSpecDatabase, SpecDatabase } from './spec-database';

@Module({})
class SpecCoreModule {
  static forRoot(config: IdentityConfig, clock: Clock): DynamicModule {
    return {
      module: SpecCoreModule,
      global: true,
      providers: [
        { provide: IDENTITY_CONFIG, useValue: config },
        { provide: Clock, useValue: clock },
        { provide: METRICS_REGISTRY, useValue: new Registry() },
      ],
      exports: [IDENTITY_CONFIG, Clock, METRICS_REGISTRY],
    };
  }
}

/** The identity service's use cases wired as in the app, on a fresh database, without the gRPC server. */
export class IdentityHarness {
  private constructor(
    readonly database: SpecDatabase,
    readonly config: IdentityConfig,
    readonly clock: FakeClock,
    private readonly module: TestingModule,
  ) {}

  static async start(): Promise<IdentityHarness> {
    const database = await createSpecDatabase();
    // No broker for these specs: the outbox keeps its events (the relay retries a closed port).
    const config = loadIdentityConfig({
      IDENTITY_DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      NATS_URL: 'nats://127.0.0.1:9',
      PLATFORM_GRPC_ADDR: '127.0.0.1:9',
    });
    const clock = new FakeClock();
    try {
      const module = await Test.createTestingModule({
        imports: [
          SpecCoreModule.forRoot(config, clock),
          UsersModule,
          PasswordsModule,
          CredentialsModule,
          ActivationModule,
        ],
      })
        .setLogger({ log: () => undefined, warn: () => undefined, error: () => undefined })
        .compile();
      await module.init();
      return new IdentityHarness(database, config, clock, module);
    } catch (error) {
      await database.drop();
      throw error;
    }
  }

  get<T>(type: Type<T>): T {
    return this.module.get(type, { strict: false });
  }

  /** An org bootstrapped as the operator would, with its active admin and a token of the admin's. */
  async seedOrg(name: string, adminPassword = 'admin-password-1'): Promise<SeededOrg> {
    const { orgId, adminUserId } = await createBootstrapService(
      this.get(PrismaService),
      this.config,
      this.clock,
    ).bootstrap({ orgName: name, email: `admin@${name}.example.com`, password: adminPassword });
    return { orgId, adminUserId, admin: callerOf('user', adminUserId, orgId, scopesOfRoles(['admin']), ['admin']) };
  }

  async close(): Promise<void> {
    await this.module.close();
    await this.database.drop();
  }
}

export interface SeededOrg {
  orgId: string;
  adminUserId: string;
  admin: Caller;
}

/** A verified caller as the CallerGuard would hand it over. */
export function callerOf(
  kind: Caller['kind'],
  subject: string,
  orgId: string,
  scopes: string[],
  roles: string[] = [],
): Caller {
  return {
    kind,
    subject,
    orgId,
    clientId: kind === 'client' ? subject : 'web',
    scopes: new Set(scopes),
    roles,
    tokenId: `jti-${subject}`,
    expiresAt: Date.now() + 7_200_000,
  };
}

/** The DomainError a use case refused with; fails the test when it succeeded or threw anything else. */
export async function domainFailure(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}
