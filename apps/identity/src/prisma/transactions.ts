import { Injectable } from '@nestjs/common';

import { Prisma } from '../generated/prisma/client';
import { PrismaService } from './prisma.service';

/** What a repository runs its queries on: the client, or the transaction it was handed. */
export type Db = PrismaService | Prisma.TransactionClient;

/**
 * Runs work that must commit or fail as a whole (a user and the completion of its idempotency key).
 * Services use this instead of the Prisma client; repositories take the `Db` it hands out.
 */
@Injectable()
export class Transactions {
  constructor(private readonly prisma: PrismaService) {}

  run<T>(work: (db: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 5_000, timeout: 10_000 });
  }
}
