import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { ClientRepository } from './client.repository';
import { ClientService } from './client.service';

/** OAuth clients (named so, to tell it from Nest's gRPC `ClientsModule`). */
@Module({
  imports: [PrismaModule],
  providers: [ClientRepository, ClientService],
  exports: [ClientService],
})
export class OAuthClientsModule {}
