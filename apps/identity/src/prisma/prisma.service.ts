import { DatabaseReadiness, DirectStatements, migrationsDir, pgDatabase } from '@acct/database';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';
import { PrismaClient } from '../generated/prisma/client';

/**
 * The identity database, owned by this service alone. `direct` runs a hot path's single statements on
 * the same pool without Prisma's runtime (`DirectStatements`).
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  readonly direct: DirectStatements;

  constructor(
    @Inject(IDENTITY_CONFIG)
    config: Pick<
      IdentityConfig,
      'IDENTITY_DATABASE_URL' | 'DATABASE_PREPARED_STATEMENTS' | 'DATABASE_QUERY_TIMEOUT_MS'
    >,
  ) {
    const database = pgDatabase(config.IDENTITY_DATABASE_URL, {
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
export class IdentityDatabaseReadiness extends DatabaseReadiness {
  constructor(prisma: PrismaService) {
    super(prisma, migrationsDir('identity'));
  }
}
