import { DatabaseReadiness, migrationsDir, pgAdapter } from '@acct/database';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';
import { PrismaClient } from '../generated/prisma/client';

/** The identity database, owned by this service alone. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(
    @Inject(IDENTITY_CONFIG) config: Pick<IdentityConfig, 'IDENTITY_DATABASE_URL' | 'DATABASE_PREPARED_STATEMENTS'>,
  ) {
    super({
      adapter: pgAdapter(config.IDENTITY_DATABASE_URL, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS }),
    });
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
