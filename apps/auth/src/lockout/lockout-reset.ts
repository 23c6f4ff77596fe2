import { Injectable } from '@nestjs/common';

import { PrismaService } from '../prisma/prisma.service';

/**
 * An admin's unlock (contract §7 `DELETE /v2/users/{id}/lockout`): forgets every (username, IP)
 * lockout pair and the account-wide ceiling of the given login keys, in one transaction. The sources
 * that logged in before stay known (they are the account's own, not a lock).
 */
@Injectable()
export class LockoutReset {
  constructor(private readonly prisma: PrismaService) {}

  /** Clears the pairs and ceilings of `usernames` (every key the account's logins are counted under). */
  async clear(usernames: readonly string[]): Promise<void> {
    if (usernames.length === 0) return;
    const keys = [...usernames];
    await this.prisma.$transaction([
      this.prisma.loginThrottle.deleteMany({ where: { username: { in: keys } } }),
      this.prisma.loginAccountThrottle.deleteMany({ where: { username: { in: keys } } }),
    ]);
  }
}
