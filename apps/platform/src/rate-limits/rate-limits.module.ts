import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.module';
import { QuotasModule } from '../quotas/quotas.module';
import { RateLimitsGrpcController } from './rate-limits.grpc-controller';
import { RateLimitsRepository } from './rate-limits.repository';
import { RateLimitsService } from './rate-limits.service';

@Module({
  imports: [PrismaModule, QuotasModule],
  controllers: [RateLimitsGrpcController],
  providers: [RateLimitsRepository, RateLimitsService],
  exports: [RateLimitsService],
})
export class RateLimitsModule {}
