import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.module';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { IdempotencyPurger } from './idempotency-purger';

/** Idempotency-Key handling for any operation that creates something (contract §3). */
@Module({
  imports: [PrismaModule],
  providers: [IdempotencyRepository, IdempotencyService, IdempotencyPurger],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
