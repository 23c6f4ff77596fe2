import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.module';
import { ApiUsageReader } from './api-usage.reader';
import { ProcessedEventPruner } from './processed-event-pruner';
import { QuotasGrpcController } from './quotas.grpc-controller';
import { QuotasRepository } from './quotas.repository';
import { QuotasService } from './quotas.service';
import { UsageReportedConsumer, UserCountConsumer } from './usage-events.consumer';

@Module({
  imports: [PrismaModule],
  controllers: [QuotasGrpcController],
  providers: [
    QuotasRepository,
    QuotasService,
    ApiUsageReader,
    UsageReportedConsumer,
    UserCountConsumer,
    ProcessedEventPruner,
  ],
  exports: [QuotasService, QuotasRepository],
})
export class QuotasModule {}
