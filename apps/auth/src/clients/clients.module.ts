import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { ClientRepository } from './client.repository';
import { ClientService } from './client.service';
import { ClientCache } from './client-cache';

/** OAuth clients (named so, to tell it from Nest's gRPC `ClientsModule`). */
@Module({
  imports: [PrismaModule],
  providers: [ClientCache, ClientRepository, ClientService],
  exports: [ClientService],
})
export class OAuthClientsModule {}
