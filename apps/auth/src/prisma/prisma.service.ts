import { DatabaseReadiness, migrationsDir, pgAdapter } from '@acct/database';
import { Inject, Injectable, Module, OnModuleDestroy } from '@nestjs/common';

import { AUTH_CONFIG, AuthConfig } from '../config';
import { PrismaClient } from '../generated/prisma/client';

/** The auth database, owned by this service alone. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    super({
      adapter: pgAdapter(config.AUTH_DATABASE_URL, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS }),
    });
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
