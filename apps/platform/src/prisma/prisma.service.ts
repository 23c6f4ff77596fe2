import { DatabaseReadiness, migrationsDir, pgAdapter } from '@acct/database';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';
import { PrismaClient } from '../generated/prisma/client';

/** The platform database. Connects lazily, so the process starts (and reports) while it is down. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    super({
      adapter: pgAdapter(config.PLATFORM_DATABASE_URL, {
        connectTimeoutMs: config.HEALTH_PROBE_TIMEOUT_MS,
        preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      }),
    });
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
