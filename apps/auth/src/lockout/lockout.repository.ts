import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';
import { PairRow, PairSlot, pairSlotOf, PairWindow } from './login-throttle.repository';
import { CLEAR_PAIR, GIVE_BACK, TAKE_PAIR_SLOT } from './login-throttle.statements';

/**
 * The `login_throttles` table alone, for password checks that have a pair but no account budget (the
 * MFA settings' current-password check); a login takes its pair's slot with the budget's
 * (LoginThrottleRepository).
 */
@Injectable()
export class LockoutRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Counts one attempt of the pair with one atomic upsert (TAKE_PAIR_SLOT). */
  async takeSlot(username: string, clientIp: string, now: Date, rules: PairWindow): Promise<PairSlot> {
    const { maxFailures, windowSeconds, lockSeconds } = rules;
    const [slot] = await this.prisma.direct.query<PairRow>(TAKE_PAIR_SLOT, [
      username,
      clientIp,
      now,
      windowSeconds,
      maxFailures,
      lockSeconds,
    ]);
    return pairSlotOf(slot);
  }

  /** Forgets the pair's attempts (after a successful check). */
  async clear(username: string, clientIp: string): Promise<void> {
    await this.prisma.direct.query(CLEAR_PAIR, [username, clientIp]);
  }

  /**
   * Gives back the pair's slot of an attempt whose password was never checked (GIVE_BACK, no budget),
   * taken at `slotTakenAt`, while the pair still counts it.
   */
  async giveBack(username: string, clientIp: string, slotTakenAt: Date, rules: PairWindow): Promise<void> {
    await this.prisma.direct.query(GIVE_BACK, [username, clientIp, null, rules.maxFailures, slotTakenAt]);
  }
}
