import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.module';
import { OutboxRelay } from './outbox.relay';
import { OutboxRepository } from './outbox.repository';
import { OutboxPruner } from './outbox-pruner';

@Module({
  imports: [PrismaModule],
  providers: [OutboxRepository, OutboxRelay, OutboxPruner],
  exports: [OutboxRepository, OutboxRelay],
})
export class OutboxModule {}
