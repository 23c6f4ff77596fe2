import { DatabaseReadiness, DirectStatements, migrationsDir, pgDatabase } from '@acct/database';
import { Inject, Injectable, Module, OnModuleDestroy } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { PrismaClient } from '../generated/prisma/client';

/**
 * The auth database, owned by this service alone. `direct` runs a hot path's single statements on the
 * same pool without Prisma's runtime (`DirectStatements`): a refresh's rotation, the login audit's
 * batched insert.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  readonly direct: DirectStatements;

  constructor(
    @Inject(AUTH_CONFIG)
    config: Pick<AuthConfig, 'AUTH_DATABASE_URL' | 'DATABASE_PREPARED_STATEMENTS' | 'DATABASE_QUERY_TIMEOUT_MS'>,
  ) {
    const database = pgDatabase(config.AUTH_DATABASE_URL, {
      preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    });
    super({ adapter: database.adapter });
    this.direct = database.direct;
  }

  async onModuleDestroy() {
    await this.$disconnect();
  }
}

@Injectable()
export class AuthDatabaseReadiness extends DatabaseReadiness {
  constructor(prisma: PrismaService) {
    super(prisma, migrationsDir('auth'));
  }
}

@Module({ providers: [PrismaService, AuthDatabaseReadiness], exports: [PrismaService, AuthDatabaseReadiness] })
export class PrismaModule {}
