import { RateLimitTier, STANDARD_TIERS, TierScope } from '@acct/limits';
import { valueWithin } from '@acct/observability';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { PlatformBackend } from '../backends/backends.module';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { NO_QUOTA } from './api-usage';

/** What the gateway holds an org to: its rate-limit tiers and its daily API requests quota (NO_QUOTA: none). */
export interface OrgLimits {
  tiers: RateLimitTier[];
  apiRequestsPerDay: number;
}

/** An org never heard of while the platform is unreachable: the standard tiers, no daily quota enforced. */
const unknownOrg = (): OrgLimits => ({ tiers: [...STANDARD_TIERS], apiRequestsPerDay: NO_QUOTA });

/**
 * A request that names no org (no token: health, the token endpoint, the login page): the standard
 * plan's tiers, which are what the platform answers for no org, from the same code. Not asked for: a
 * hung platform held the first such request (a health probe of a gateway just started) for the whole
 * gRPC deadline, and one each time the answer expired for RATE_LIMIT_TIERS_REFRESH_WAIT_MS.
 */
const NO_ORG: OrgLimits = unknownOrg();

/** An org no request has named for this long is forgotten (its next request fetches its limits anew). */
export const TIERS_IDLE_MS = 60 * 60 * 1000;
/** Idle orgs are looked for once more than this many are held, and then when their number has doubled. */
const SWEEP_ABOVE = 1000;

interface Entry {
  limits: OrgLimits;
  /** The last request about the org. */
  usedAt: number;
  /** From here on, a request starts a refresh in the background (and does not wait for it). */
  refreshAt: number;
  expiresAt: number;
}

/**
 * Each org's tiers and daily API requests quota as the platform service reports them, kept for a short
 * TTL. While the platform is unreachable the last known ones stay in force (for an org never seen, the
 * standard plan's tiers and no quota: an outage of the platform refuses nobody for its quota).
 * Once an org's tiers have expired, a request waits for their refresh at most
 * RATE_LIMIT_TIERS_REFRESH_WAIT_MS and is otherwise decided with the last known tiers while the
 * refresh goes on, so a slow or hung platform costs a request that much, not a whole gRPC deadline;
 * once that refresh has failed, no request waits until the platform answers again.
 * The first request about an org waits for its tiers (concurrent ones share the call); once that
 * call has failed, the standard tiers are the org's known ones until the platform answers.
 * In steady use no request waits at all: a request in the second half of the TTL starts the refresh
 * in the background and is decided with the tiers in memory, which the refresh then replaces.
 * An org no request has named for TIERS_IDLE_MS is forgotten, so the memory holds the orgs in use, not
 * every org a long-running gateway ever served (each held its eight tiers, about 1.7 KiB, for good).
 */
@Injectable()
export class TierCache {
  private readonly logger = new Logger('rate-limit-tiers');
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<OrgLimits>>();
  private sweepAt = SWEEP_ABOVE;

  constructor(
    private readonly platform: PlatformBackend,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async tiersOf(orgId: string | undefined): Promise<RateLimitTier[]> {
    return (await this.limitsOf(orgId)).tiers;
  }

  async limitsOf(orgId: string | undefined): Promise<OrgLimits> {
    if (!orgId) return NO_ORG;
    const entry = this.entries.get(orgId);
    const now = Date.now();
    if (entry) entry.usedAt = now;
    if (entry && entry.refreshAt > now) return entry.limits;
    let fetching = this.pending.get(orgId);
    if (!fetching) {
      fetching = this.fetch(orgId, entry).finally(() => this.pending.delete(orgId));
      this.pending.set(orgId, fetching);
    }
    if (entry && entry.expiresAt > now) return entry.limits; // refreshed in the background
    if (!entry) return fetching; // nothing known yet: the fetch decides (bounded by the gRPC deadline)
    return valueWithin(fetching, this.config.RATE_LIMIT_TIERS_REFRESH_WAIT_MS, entry.limits);
  }

  private async fetch(orgId: string, stale: Entry | undefined): Promise<OrgLimits> {
    try {
      const { tiers, apiRequestsPerDay } = await this.platform.call('getRateLimits', { orgId });
      const limits = {
        tiers: tiers.map((tier) => ({ ...tier, scope: tier.scope as TierScope })),
        apiRequestsPerDay: Number(apiRequestsPerDay),
      };
      const ttl = this.config.RATE_LIMIT_TIERS_TTL_MS;
      const fetchedAt = Date.now();
      this.remember(orgId, { limits, usedAt: fetchedAt, refreshAt: fetchedAt + ttl / 2, expiresAt: fetchedAt + ttl });
      return limits;
    } catch (error) {
      this.logger.warn(`limits of org ${orgId} unavailable: ${(error as Error).message}`);
      // The last known limits (the standard ones for an org never heard of) stay in force until the
      // platform answers, each request retrying in the background: while the platform is away, refusing
      // or hung, and however long, no request waits for it again. (Kept expiring, a known org's every
      // request waited RATE_LIMIT_TIERS_REFRESH_WAIT_MS for a call that would fail, each TTL and for good.)
      const limits = stale?.limits ?? unknownOrg();
      const now = Date.now();
      this.remember(orgId, { limits, usedAt: now, refreshAt: now, expiresAt: Number.POSITIVE_INFINITY });
      return limits;
    }
  }

  /** Orgs held now (idle ones not yet forgotten included). */
  get size(): number {
    return this.entries.size;
  }

  private remember(orgId: string, entry: Entry) {
    this.entries.set(orgId, { ...entry, usedAt: Math.max(entry.usedAt, this.entries.get(orgId)?.usedAt ?? 0) });
    if (this.entries.size <= this.sweepAt) return;
    const idleSince = entry.usedAt - TIERS_IDLE_MS;
    for (const [key, held] of this.entries) if (held.usedAt <= idleSince) this.entries.delete(key);
    this.sweepAt = Math.max(SWEEP_ABOVE, this.entries.size * 2);
  }
}
