import { platformV1 } from '@acct/contracts';
import { AUTHORIZATION_METADATA_KEY, callRaw, createRawClient, outgoingMetadata, RawClient } from '@acct/grpc';
import { isQuota, USERS_QUOTA } from '@acct/limits';
import { DomainError } from '@acct/problem';
import { Metadata } from '@grpc/grpc-js';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';

import { IDENTITY_CONFIG, IdentityConfig } from '../config';
import { Db } from '../prisma/transactions';

/**
 * The org's "Users" quota (contract §5): the limit comes from the platform service (asked on the
 * caller's behalf, with its token); the count is identity's own, taken under a per-org lock inside the
 * creating transaction, so concurrent creations cannot overshoot it. If the platform cannot be asked,
 * creation goes on (a quota service outage must not stop sign-ups) and a warning is logged. The
 * lookup gets half of GRPC_DEADLINE_MS: it runs inside the gateway's call to identity, which has the
 * whole deadline, so a hung platform is given up on while the creation can still answer in time.
 */
@Injectable()
export class UsersQuota implements OnModuleDestroy {
  private readonly logger = new Logger('users-quota');
  private readonly platform: RawClient;

  constructor(@Inject(IDENTITY_CONFIG) private readonly config: IdentityConfig) {
    this.platform = createRawClient(
      'platform/v1/platform.proto',
      'platform.v1.PlatformService',
      config.PLATFORM_GRPC_ADDR,
      config.PROTO_DIR,
    );
  }

  async limit(accessToken: string | undefined): Promise<number | undefined> {
    if (!accessToken) return undefined;
    const metadata: Metadata = outgoingMetadata({ [AUTHORIZATION_METADATA_KEY]: `Bearer ${accessToken}` });
    try {
      const { quotas } = await callRaw<platformV1.GetQuotaRequest, platformV1.GetQuotaResponse>(
        this.platform,
        'getQuota',
        { dimension: USERS_QUOTA.dimension },
        Math.floor(this.config.GRPC_DEADLINE_MS / 2),
        metadata,
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
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`users-quota:${orgId}`}))`;
    const count = await db.user.count({ where: { orgId } });
    if (count >= limit) {
      throw new DomainError('quota_exceeded', `The organization has reached its quota of ${limit} users.`);
    }
  }

  onModuleDestroy() {
    this.platform.close();
  }
}
