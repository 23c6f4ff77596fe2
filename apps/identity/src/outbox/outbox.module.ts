import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.module';
import { OutboxRelay } from './outbox.relay';
import { OutboxRepository } from './outbox.repository';

@Module({
  imports: [PrismaModule],
  providers: [OutboxRepository, OutboxRelay],
  exports: [OutboxRepository, OutboxRelay],
})
export class OutboxModule {}
