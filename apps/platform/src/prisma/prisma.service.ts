import { DatabaseReadiness, DirectStatements, migrationsDir, pgDatabase } from '@acct/database';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';
import { PrismaClient } from '../generated/prisma/client';

/**
 * The platform database. Connects lazily, so the process starts (and reports) while it is down.
 * `direct` runs a hot path's single statements on the same pool without Prisma's runtime
 * (`DirectStatements`): the quota state a user creation asks for, and each usage event's application.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  readonly direct: DirectStatements;

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    const database = pgDatabase(config.PLATFORM_DATABASE_URL, {
      connectTimeoutMs: config.HEALTH_PROBE_TIMEOUT_MS,
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
export class PlatformDatabaseReadiness extends DatabaseReadiness {
  constructor(prisma: PrismaService) {
    super(prisma, migrationsDir('platform'));
  }
}
