import { DatabaseReadiness, migrationsDir, pgAdapter } from '@acct/database';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';
import { PrismaClient } from '../generated/prisma/client';

/** The identity database, owned by this service alone. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(@Inject(IDENTITY_CONFIG) config: Pick<IdentityConfig, 'IDENTITY_DATABASE_URL'>) {
    super({ adapter: pgAdapter(config.IDENTITY_DATABASE_URL) });
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
