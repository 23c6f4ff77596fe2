import type { ServerResponse } from 'node:http';

import {
  addressKey,
  API_QUOTA_EXEMPT_GROUPS,
  OAUTH_GROUP,
  RateLimitTier,
  secondsUntilUtcMidnight,
  STANDARD_TIERS,
} from '@acct/limits';
import { DomainError } from '@acct/problem';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import type { Authentication } from '../auth/authenticated-request';
import { clientAddressKey, socketAddress } from '../http/client-address';
import type { PeerLimit } from '../http/framework-errors';
import { sendProblem } from '../http/problem';
import { ApiUsageCounter, NO_QUOTA } from './api-usage';
import { leaveRefusalToRoute } from './rate-limited.decorator';
import { RateLimitDecision, RateLimiter } from './rate-limiter';
import { TierCache } from './tier-cache';

export const RATE_LIMITER = Symbol('RATE_LIMITER');
export const API_USAGE = Symbol('API_USAGE');

/**
 * Runs for every request (Fastify onRequest) right after the authenticate hook: takes a token from the
 * bucket of the route's declared group (`@RateLimited`; `default` for a request that matches no
 * route), per token for the caller the authenticate hook found or per IP, sets the rate-limit headers
 * every response carries, and answers 429 `rate_limited` when the bucket is empty (or leaves that
 * answer to a route declared `refusedByRoute`: the login page answers it as a page). A request with a
 * per-token bucket is also held to its org's daily API requests quota, in the same Redis step (exact
 * across gateways): once the day's count has reached it, 429 `quota_exceeded` until UTC midnight.
 */
@Injectable()
export class RateLimitHook {
  /**
   * By a request's response (see `limitPeer`): the outcome `handle` decided for it, or, before that,
   * the refusal waiting for it.
   */
  private readonly outcomes = new WeakMap<ServerResponse, PeerLimit | ((outcome: PeerLimit) => void)>();

  constructor(
    private readonly tiers: TierCache,
    @Inject(RATE_LIMITER) private readonly limiter: RateLimiter,
    @Inject(API_USAGE) private readonly usage: ApiUsageCounter,
  ) {}

  /**
   * The rate limit of a peer whose bytes Node's HTTP parser refused. Refused after a request's headers
   * (`inFlight`: its body did not arrive in time, or is not HTTP), the refusal is that request's answer:
   * it was counted when it arrived, so it carries that request's decision (once made) and takes no
   * second token. Otherwise no request, route or token exists and only the socket's address is known:
   * it takes a token from the `default` group's bucket. Either way the answer carries the rate-limit
   * headers (contract §2: every response) and, when the bucket is empty, is a 429.
   */
  async limitPeer(remoteAddress: string | undefined, inFlight?: ServerResponse): Promise<PeerLimit> {
    if (inFlight) {
      const decided = this.outcomes.get(inFlight);
      if (decided && typeof decided !== 'function') return decided;
      return new Promise((resolve) => this.outcomes.set(inFlight, resolve));
    }
    const tier = tierOf((await this.tiers.limitsOf(undefined)).tiers, 'default');
    const decision = await this.limiter.take(tier, `ip:${addressKey(socketAddress(remoteAddress))}`);
    return {
      headers: rateLimitHeaders(tier.group, decision),
      refusal: refusalOf(tier.group, decision, NO_QUOTA, decision.now),
    };
  }

  async handle(request: FastifyRequest, reply: FastifyReply) {
    const group = request.routeOptions?.config?.rateLimitGroup ?? 'default';
    const { caller } = request as FastifyRequest & Authentication;
    const { tiers, apiRequestsPerDay } = await this.tiers.limitsOf(caller?.orgId);
    const tier = tierOf(tiers, group);
    // A per-token group without a valid token is counted per IP (contract §2).
    const perToken = tier.scope === 'per-token' && caller !== undefined;
    const key = perToken ? `token:${caller.tokenId}` : `ip:${clientAddressKey(request)}`;
    // A shared per-token bucket is kept beside its org's API counter, and one script takes the token
    // and counts the request (so a quota read later in this request sees it). Any other request with a
    // caller is counted on its own, before the bucket is taken on the same Redis connection: Redis runs
    // a connection's commands in order, so the count is applied by the time the bucket answers. (A
    // per-IP bucket is never counted with: one bucket must be in one place, with or without a caller.)
    // (Only such a request can be refused for the quota: a per-IP group's, health's or a token
    // request's is counted but never refused, nor one while Redis is away, when nothing is counted.)
    const quota = API_QUOTA_EXEMPT_GROUPS.has(tier.group) ? NO_QUOTA : apiRequestsPerDay;
    // The instant that names the day's counter: a refusal for its quota lasts until that day ends.
    const countedAt = Date.now();
    const usage =
      perToken && this.limiter.isShared(tier.group) ? this.usage.usageOf(caller.orgId, quota, countedAt) : undefined;
    if (caller && !usage) this.usage.count(caller.orgId);
    const decision = await this.limiter.take(tier, key, usage);
    const outcome: PeerLimit = {
      headers: setRateLimitHeaders(reply, tier.group, decision),
      refusal: refusalOf(tier.group, decision, quota, countedAt),
    };
    // Node's parser may still refuse the rest of this request (its body): that answer carries this outcome.
    const waiting = this.outcomes.get(reply.raw);
    this.outcomes.set(reply.raw, outcome);
    if (typeof waiting === 'function') waiting(outcome);
    if (!outcome.refusal) return;
    if (request.routeOptions?.config?.rateLimitRefusedByRoute) return leaveRefusalToRoute(request, outcome.refusal);
    return sendProblem(request, reply, outcome.refusal);
  }
}

/** `group`'s tier among the org's, else the standard plan's, else the `default` tier's limits under its name. */
function tierOf(tiers: readonly RateLimitTier[], group: string): RateLimitTier {
  return (
    tiers.find((candidate) => candidate.group === group) ??
    STANDARD_TIERS.find((candidate) => candidate.group === group) ?? { ...STANDARD_TIERS.at(-1)!, group }
  );
}

/**
 * The 429 of a decision that refuses its request: the org's API requests of the day made, or an empty
 * bucket. `countedAt` named the day's counter: the refusal lasts until that day ends, reckoned on that
 * clock (Redis decides a moment later, which may be past midnight: that is not a whole day's wait).
 */
function refusalOf(
  group: string,
  decision: RateLimitDecision,
  quota: number,
  countedAt: number,
): DomainError | undefined {
  if (decision.overQuota) {
    return new DomainError('quota_exceeded', `The organization has made its ${quota} API requests of the day (UTC).`, {
      status: 429,
      retryAfter: secondsUntilUtcMidnight(countedAt),
    });
  }
  return decision.allowed ? undefined : rateLimited(group, decision);
}

/** The 429 of an empty bucket, with Retry-After: the seconds until its next token. */
function rateLimited(group: string, decision: RateLimitDecision): DomainError {
  const detail = `Too many requests in the ${group} group; retry later.`;
  return new DomainError('rate_limited', detail, {
    retryAfter: Math.max(1, Math.ceil(decision.msUntilToken / 1000)),
    // The token endpoint's errors carry RFC 6749 §5.2's members too (contract §4: 429 rate_limited).
    ...(group === OAUTH_GROUP ? { extensions: { error: 'rate_limited', error_description: detail } } : {}),
  });
}

/** Contract §2's X-RateLimit-* headers, and the IETF draft's RateLimit-Policy / RateLimit beside them. */
export function rateLimitHeaders(group: string, decision: RateLimitDecision): Array<[string, string]> {
  const limit = Math.floor(decision.capacity);
  const resetAt = Math.ceil((decision.now + decision.msUntilFull) / 1000);
  const windowSeconds = Math.max(1, Math.ceil(decision.windowMs / 1000));
  return [
    ['X-RateLimit-Limit', String(limit)],
    ['X-RateLimit-Remaining', String(decision.remaining)],
    ['X-RateLimit-Reset', String(resetAt)],
    ['RateLimit-Policy', `"${group}";q=${limit};w=${windowSeconds}`],
    ['RateLimit', `"${group}";r=${decision.remaining};t=${Math.max(0, Math.ceil(decision.msUntilToken / 1000))}`],
  ];
}

/** Sets contract §2's headers on `reply`; returns them. */
export function setRateLimitHeaders(reply: FastifyReply, group: string, decision: RateLimitDecision) {
  const headers = rateLimitHeaders(group, decision);
  for (const [name, value] of headers) void reply.header(name, value);
  return headers;
}
