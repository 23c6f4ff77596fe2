import { platformV1 } from '@acct/contracts';
import { GrpcClient } from '@acct/grpc';
import { isQuota, USERS_QUOTA } from '@acct/limits';
import { DomainError } from '@acct/problem';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';
import { Db } from '../prisma/transactions';
import { UsersQuotaRepository } from './users-quota.repository';

/** The platform service as identity calls it (typed by its generated client). */
export class PlatformGrpc extends GrpcClient<platformV1.PlatformServiceClient> {}

/**
 * The org's "Users" quota (contract §5): the limit comes from the platform service (asked on the
 * caller's behalf, with its token); the count is identity's own, taken under a per-org lock inside the
 * creating transaction, so concurrent creations cannot overshoot it. If the platform cannot be asked,
 * creation goes on (a quota service outage must not stop sign-ups) and a warning is logged. The
 * lookup gets half of GRPC_DEADLINE_MS: it runs inside the gateway's call to identity, which has the
 * whole deadline, so a hung platform is given up on while the creation can still answer in time.
 */
@Injectable()
export class UsersQuota {
  private readonly logger = new Logger('users-quota');

  constructor(
    private readonly platform: PlatformGrpc,
    private readonly repository: UsersQuotaRepository,
    @Inject(IDENTITY_CONFIG) private readonly config: IdentityConfig,
  ) {}

  async limit(accessToken: string | undefined): Promise<number | undefined> {
    if (!accessToken) return undefined;
    try {
      const { quotas } = await this.platform.call(
        'getQuota',
        { dimension: USERS_QUOTA.dimension, name: USERS_QUOTA.name },
        { accessToken, deadlineMs: Math.floor(this.config.GRPC_DEADLINE_MS / 2) },
      );
      return quotas.find((quota) => isQuota(quota, USERS_QUOTA))?.limit;
    } catch (error) {
      this.logger.warn(`Users quota unknown (${(error as Error).message}); creating without it`);
      return undefined;
    }
  }

  /** Inside the creating transaction: refuses when the org already has `limit` users. */
  async enforce(db: Db, orgId: string, limit: number | undefined): Promise<void> {
    if (limit === undefined) return;
    if ((await this.repository.lockAndCount(db, orgId)) >= limit) {
      throw new DomainError('quota_exceeded', `The organization has reached its quota of ${limit} users.`);
    }
  }
}
