import { Module } from '@nestjs/common';

import { IdentityDatabaseReadiness, PrismaService } from './prisma.service';
import { Transactions } from './transactions';

@Module({
  providers: [PrismaService, IdentityDatabaseReadiness, Transactions],
  exports: [PrismaService, IdentityDatabaseReadiness, Transactions],
})
export class PrismaModule {}
